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
  const host = hostNameOf(hostHeader);
  const suffix = `.${baseHost.toLowerCase()}`;
  if (!host.endsWith(suffix)) return defaultTenant;
  const sub = host.slice(0, -suffix.length);
  const label = sub.includes('.') ? sub.slice(0, sub.indexOf('.')) : sub;
  return isValidTenant(label) ? label : null;
}

/** The host name of a Host header: lower case, without its port. */
function hostNameOf(hostHeader: string): string {
  return hostHeader.replace(/:\d+$/, '').toLowerCase();
}

/**
 * Whether hooks are served to a request with this Host header: on `hookHost` (HOOK_BASE_URL's host name, any
 * port) alone; without one, on the base host — every host that is not a system's (`<system>.<baseHost>`), as
 * `tenantFromHost` treats them.
 */
export function servesHooks(
  hostHeader: string | undefined,
  hookHost: string | undefined,
  baseHost: string,
): boolean {
  if (hookHost !== undefined)
    return hostHeader !== undefined && hostNameOf(hostHeader) === hookHost.toLowerCase();
  return hostHeader === undefined || !hostNameOf(hostHeader).endsWith(`.${baseHost.toLowerCase()}`);
}
