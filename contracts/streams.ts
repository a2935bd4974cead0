/**
 * Stream naming: `<category>-<tenant>.<id>`. Category first, so EventStoreDB `$ce-<category>` streams and
 * category filters work. The category has no `-` and the tenant (a DNS label) no `.`, so both split cleanly.
 */
export interface StreamName {
  readonly category: string;
  readonly tenant: string;
  readonly id: string;
}

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

export function parseStreamName(name: string): StreamName | null {
  const dash = name.indexOf('-');
  if (dash <= 0) return null;
  const dot = name.indexOf('.', dash + 1);
  if (dot <= dash + 1 || dot === name.length - 1) return null;
  const category = name.slice(0, dash);
  const tenant = name.slice(dash + 1, dot);
  if (!CATEGORY.test(category) || !TENANT.test(tenant)) return null;
  return { category, tenant, id: name.slice(dot + 1) };
}

export function categoryOf(name: string): string {
  const dash = name.indexOf('-');
  return dash < 0 ? name : name.slice(0, dash);
}
