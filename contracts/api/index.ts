/** Every operation the platform serves, by area. A new route adds its contract to its area's table. */
import { API_DESCRIPTION_OPERATIONS } from './description';
import type { Operation } from './operation';
import { PLATFORM_OPERATIONS } from './platform';

/** The version of the API description; `npm run release -- <version>` moves it (docs/api.md, "Versions"). */
export const API_VERSION = '5.8.2';

export const OPERATIONS: readonly Operation[] = [...PLATFORM_OPERATIONS, ...API_DESCRIPTION_OPERATIONS];
