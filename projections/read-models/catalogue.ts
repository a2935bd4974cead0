import type { Projection } from '../projection';
import { fieldsProjection } from './fields';
import { filesProjection } from './files';
import { oauthProjection } from './oauth';
import { identityProjection } from './identity';
import { recordsProjection } from './records';
import { recordVersionsProjection } from './record-versions';
import {
  categoriesProjection,
  fieldGroupsProjection,
  labelsProjection,
  menusProjection,
  segmentsProjection,
  teamsProjection,
} from './catalogue-entities';
import { auditProjection, fieldHistoryProjection } from './history';
import { remoteLinksProjection } from './remote-links';
import { subscriptionsProjection } from './subscriptions';
import { modulesProjection, spacesProjection } from './spaces-and-modules';
import {
  dataStructuresProjection,
  hookLogsProjection,
  hookQueueProjection,
  scenarioRunsProjection,
  runBacklogsProjection,
  scenariosProjection,
  webhooksProjection,
} from './integrator';
import {
  aiBalanceProjection,
  aiJobsProjection,
  transformsProjection,
  validationResultsProjection,
  validationsProjection,
} from './ai';

/** Every read-model projection the platform runs (the relay is not one: it writes no read model). */
export const READ_MODEL_PROJECTIONS: readonly Projection[] = [
  spacesProjection,
  modulesProjection,
  fieldsProjection,
  recordsProjection,
  recordVersionsProjection,
  filesProjection,
  labelsProjection,
  segmentsProjection,
  remoteLinksProjection,
  categoriesProjection,
  teamsProjection,
  menusProjection,
  fieldGroupsProjection,
  auditProjection,
  fieldHistoryProjection,
  identityProjection,
  oauthProjection,
  webhooksProjection,
  scenariosProjection,
  hookQueueProjection,
  hookLogsProjection,
  scenarioRunsProjection,
  runBacklogsProjection,
  dataStructuresProjection,
  transformsProjection,
  validationsProjection,
  validationResultsProjection,
  aiBalanceProjection,
  aiJobsProjection,
  subscriptionsProjection,
];

export function projectionNamed(name: string): Projection | undefined {
  return READ_MODEL_PROJECTIONS.find((projection) => projection.name === name);
}
