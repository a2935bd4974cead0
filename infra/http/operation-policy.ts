import { pathToRegexp } from 'path-to-regexp';
import { expressPath, type Operation } from '../../contracts/api/operation';

const FORM = 'application/x-www-form-urlencoded';

/** What the HTTP kit does with a request before its route, as the request's operation declares it. */
export interface RequestPolicy {
  /** A GET (or HEAD) for the command API (`servedByCommandApi`). */
  readonly commandSide: boolean;
  /** Takes form bodies besides JSON (a form among `body.contentTypes`). */
  readonly takesForms: boolean;
  /** The route reads its body itself (`body.readByRoute`): neither checked nor parsed. */
  readonly bodyReadByRoute: boolean;
  /**
   * The route authenticates its caller itself: the OAuth client (`security: 'client'`) or a provider's form
   * post (`formPostCallback`). The kit reads no credential on it.
   */
  readonly authenticatesItself: boolean;
  /** The session cookie counts without `X-CSRF-Token` (`sessionForm`). */
  readonly sessionForm: boolean;
}

/** The policy of every operation that declares nothing special (and of requests no operation serves). */
export const ORDINARY_POLICY: RequestPolicy = {
  commandSide: false,
  takesForms: false,
  bodyReadByRoute: false,
  authenticatesItself: false,
  sessionForm: false,
};

export function policyOfOperation(op: Operation): RequestPolicy {
  return {
    commandSide: op.method === 'get' && op.servedByCommandApi === true,
    takesForms: op.body?.contentTypes?.includes(FORM) === true,
    bodyReadByRoute: op.body?.readByRoute === true,
    authenticatesItself: op.security === 'client' || op.formPostCallback === true,
    sessionForm: op.sessionForm === true,
  };
}

const isOrdinary = (policy: RequestPolicy) =>
  (Object.keys(ORDINARY_POLICY) as Array<keyof RequestPolicy>).every(
    (key) => policy[key] === ORDINARY_POLICY[key],
  );

/** The lower-cased first segment of a path, or undefined when it is not literal (a parameter). */
function literalFirstSegment(path: string): string | undefined {
  const match = /^\/([^/{}]+)(?:\/|$)/.exec(path);
  return match?.[1]?.toLowerCase();
}

interface PolicyRoute {
  readonly pattern: RegExp;
  readonly policy: RequestPolicy;
}

/**
 * The policy of a request under the API base (`method`, and `path` relative to the base), from the operation
 * that serves it among `operations`. Paths match as express's routers match them (case-insensitive, an
 * optional trailing slash), from the operations' own paths: no pattern comes from a request. HEAD is a GET.
 * Only the operations with a policy of their own are tried, and of those only the ones whose first segment the
 * request shares.
 */
export function requestPolicies(
  operations: readonly Operation[],
): (method: string, path: string) => RequestPolicy {
  const bySegment = new Map<string, PolicyRoute[]>();
  const anySegment = new Map<string, PolicyRoute[]>();
  for (const op of operations) {
    const policy = policyOfOperation(op);
    if (op.root || isOrdinary(policy)) continue;
    const route = {
      pattern: pathToRegexp(expressPath(op.path), { sensitive: false, trailing: true }).regexp,
      policy,
    };
    const segment = literalFirstSegment(op.path);
    const [index, key] =
      segment === undefined ? [anySegment, op.method] : [bySegment, `${op.method} ${segment}`];
    index.set(key, [...(index.get(key) ?? []), route]);
  }
  return (method, path) => {
    const wanted = method === 'HEAD' ? 'get' : method.toLowerCase();
    const end = path.indexOf('/', 1);
    const segment = path.slice(1, end === -1 ? undefined : end).toLowerCase();
    const serving = (route: PolicyRoute) => route.pattern.test(path);
    const route =
      bySegment.get(`${wanted} ${segment}`)?.find(serving) ?? anySegment.get(wanted)?.find(serving);
    return route?.policy ?? ORDINARY_POLICY;
  };
}
