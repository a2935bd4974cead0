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

export function categoryOf(name: string): string {
  const dash = name.indexOf('-');
  return dash < 0 ? name : name.slice(0, dash);
}
