/** Every operation the platform serves, by area. A new route adds its contract to its area's table. */
import { AUTH_OPERATIONS } from './auth';
import { CATALOGUE_OPERATIONS } from './catalogue';
import { API_DESCRIPTION_OPERATIONS } from './description';
import { FIELD_OPERATIONS } from './fields';
import { FILE_OPERATIONS } from './files';
import { INTEGRATOR_OPERATIONS } from './integrator';
import { MCP_OPERATIONS } from './mcp';
import { OAUTH_OPERATIONS } from './oauth';
import type { Operation } from './operation';
import { PLATFORM_OPERATIONS } from './platform';
import { RECORD_OPERATIONS } from './records';
import { STRUCTURE_OPERATIONS } from './structure';
import { USER_OPERATIONS } from './users';
import { VECTOR_OPERATIONS } from './vectors';
import { AI_OPERATIONS } from './ai';
import { DEAD_LETTER_OPERATIONS } from './dead-letters';
import { SUBSCRIPTION_API_OPERATIONS } from './subscriptions';

/** The version of the API description; `npm run release -- <version>` moves it (docs/api.md, "Versions"). */
export const API_VERSION = '5.9.0';

export const OPERATIONS: readonly Operation[] = [
  ...PLATFORM_OPERATIONS,
  ...API_DESCRIPTION_OPERATIONS,
  ...STRUCTURE_OPERATIONS,
  ...RECORD_OPERATIONS,
  ...VECTOR_OPERATIONS,
  ...FIELD_OPERATIONS,
  ...CATALOGUE_OPERATIONS,
  ...AUTH_OPERATIONS,
  ...USER_OPERATIONS,
  ...FILE_OPERATIONS,
  ...OAUTH_OPERATIONS,
  ...MCP_OPERATIONS,
  ...INTEGRATOR_OPERATIONS,
  ...AI_OPERATIONS,
  ...DEAD_LETTER_OPERATIONS,
  ...SUBSCRIPTION_API_OPERATIONS,
];
