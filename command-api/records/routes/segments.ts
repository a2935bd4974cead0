import { createSegmentBody, SEGMENT_OPERATIONS, updateSegmentBody } from '../../../contracts/api/catalogue';
import { SEGMENT } from '../../kit/attributes';
import { attributesResource } from '../../kit/attributes-resource';
import type { CommandDeps } from '../../deps';
import { segmentChecks } from '../commands';

/** Saved segments as a REST resource: a named filter (and order) of one space's records. */
export function segmentResource(deps: CommandDeps) {
  return attributesResource({
    entity: SEGMENT,
    idParam: 'segmentId',
    operations: SEGMENT_OPERATIONS,
    createBody: createSegmentBody,
    updateBody: updateSegmentBody,
    ...segmentChecks(deps),
  });
}
