import { isValidTenant } from '../../contracts/streams';

/**
 * The tenant (`{system}`) is the first label of the host when the host is a subdomain of `baseHost`
 * (`acme.records.example` with base `records.example`); any other host (an IP, `localhost`) gets the default.
 * Returns null for a subdomain that is not a valid tenant name.
 */
export function tenantFromHost(
  hostHeader: string | undefined,
  baseHost: string,
  defaultTenant: string,
): string | null {
  if (!hostHeader) return defaultTenant;
  const host = hostHeader.replace(/:\d+$/, '').toLowerCase();
  const suffix = `.${baseHost.toLowerCase()}`;
  if (!host.endsWith(suffix)) return defaultTenant;
  const sub = host.slice(0, -suffix.length);
  const label = sub.includes('.') ? sub.slice(0, sub.indexOf('.')) : sub;
  return isValidTenant(label) ? label : null;
}
