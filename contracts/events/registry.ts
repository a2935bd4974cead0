import type { EventDefinition } from './definition';
import { PlatformError } from '../errors';
import { CATALOGUE_EVENTS } from './catalogues';
import { FILE_EVENTS } from './files';
import { IDENTITY_EVENTS } from './identity';
import { RECORDS_EVENTS } from './records';
import { SYSTEM_EVENTS } from './system';
import { TENANT_EVENTS } from './tenants';
import { OAUTH_EVENTS } from './oauth';
import { INTEGRATOR_EVENTS } from './integrator';
import { AI_EVENTS } from './ai';
import { SUBSCRIPTION_EVENTS } from './subscriptions';

/**
 * Every event type, its current schema version and data schema, and the upcasters that lift stored older
 * versions to the current one. Stored events are never rewritten: old versions are upcast on read.
 */

const definitions = new Map<string, EventDefinition>();
for (const definition of [
  ...SYSTEM_EVENTS,
  ...IDENTITY_EVENTS,
  ...RECORDS_EVENTS,
  ...FILE_EVENTS,
  ...CATALOGUE_EVENTS,
  ...TENANT_EVENTS,
  ...OAUTH_EVENTS,
  ...INTEGRATOR_EVENTS,
  ...AI_EVENTS,
  ...SUBSCRIPTION_EVENTS,
]) {
  if (definitions.has(definition.type)) throw new Error(`event type ${definition.type} defined twice`);
  definitions.set(definition.type, definition);
}

function definitionOf(type: string): EventDefinition {
  const definition = definitions.get(type);
  if (!definition) throw new Error(`unknown event type ${type}`);
  return definition;
}

export function schemaVersionOf(type: string): number {
  return definitionOf(type).version;
}

/** Checks event data against its schema before it is appended; a failure is a bug in the decider. */
export function assertValidEventData(type: string, data: unknown): void {
  const result = definitionOf(type).schema.safeParse(data);
  if (!result.success)
    throw new PlatformError('internal', `event ${type} failed its schema: ${result.error.message}`);
}

/** The current-version shape of a stored event. Unknown types pass through untouched (other services' events). */
export function upcast(event: {
  readonly type: string;
  readonly schemaVersion: number;
  readonly data: unknown;
}): { type: string; data: unknown } {
  const definition = definitions.get(event.type);
  if (!definition || event.schemaVersion >= definition.version) return { type: event.type, data: event.data };
  let data = event.data;
  for (let version = event.schemaVersion; version < definition.version; version++) {
    const lift = definition.upcasters?.[version];
    if (!lift) throw new Error(`no upcaster for ${event.type} v${version} → v${version + 1}`);
    data = lift(data);
  }
  return { type: event.type, data };
}

export function isKnownEventType(type: string): boolean {
  return definitions.has(type);
}
