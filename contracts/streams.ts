/**
 * Stream naming: `<category>-<tenant>.<id>`. Category first, so EventStoreDB `$ce-<category>` streams and
 * category filters work. The category has no `-` and the tenant (a DNS label) no `.`, so both split cleanly.
 */
const CATEGORY = /^[a-z][a-zA-Z0-9]*$/;
const TENANT = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function isValidTenant(tenant: string): boolean {
  return TENANT.test(tenant);
}

export function streamName(category: string, tenant: string, id: string | number | bigint): string {
  if (!CATEGORY.test(category)) throw new Error(`invalid stream category "${category}"`);
  if (!TENANT.test(tenant)) throw new Error(`invalid tenant "${tenant}"`);
  const idText = String(id);
  if (idText.length === 0) throw new Error('empty stream id');
  return `${category}-${tenant}.${idText}`;
}

/** Separates an ordered stream's group from its own id: `<category>-<tenant>.<group>~<id>`. */
const GROUP_SEPARATOR = '~';

/**
 * A stream of an ordering group: streams of one group are relayed under one key (see `partitionKeyOf`), so a
 * consumer gets their events in the order they were appended, as if they were one stream.
 */
export function orderedStreamName(category: string, tenant: string, group: string, id: string): string {
  if (group.length === 0 || group.includes(GROUP_SEPARATOR))
    throw new Error(`invalid ordering group "${group}"`);
  return streamName(category, tenant, `${group}${GROUP_SEPARATOR}${id}`);
}

/** The key a stream's events are relayed under: its ordering group's name, or the stream's own. */
export function partitionKeyOf(streamId: string): string {
  const separator = streamId.indexOf(GROUP_SEPARATOR);
  return separator < 0 ? streamId : streamId.slice(0, separator);
}

export function categoryOf(name: string): string {
  const dash = name.indexOf('-');
  return dash < 0 ? name : name.slice(0, dash);
}
