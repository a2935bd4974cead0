import type { Request } from 'express';
import { tenantFromHost } from './tenant';

/**
 * The platform's public address, for what it publishes about itself (the OAuth issuer and its endpoints, the
 * MCP servers' protected resource metadata and `WWW-Authenticate`): `PUBLIC_URL` when configured, else
 * `http://<BASE_HOST>:<the port the request came in on>`; a system's is the same with `<system>.` before the
 * host. A request's Host header is used only when it is one of these names (or the very address and port the
 * connection came in on): any other Host, which a client writes as it likes, is never reflected.
 */
export class PublicAddress {
  private readonly configured: URL | undefined;

  constructor(
    publicUrl: string | undefined,
    private readonly baseHost: string,
    private readonly defaultTenant: string,
  ) {
    this.configured = publicUrl === undefined ? undefined : new URL(publicUrl);
  }

  /** The platform's origin as this request reached it (when that is one of its names), else its public one. */
  origin(req: Request): string {
    return this.trustedOrigin(req)?.origin ?? this.base(req).origin;
  }

  /** An origin that selects `system` (its API, its authorization server): this request's when it does. */
  originOf(req: Request, system: string): string {
    const trusted = this.trustedOrigin(req);
    if (trusted !== undefined && tenantFromHost(trusted.host, this.baseHost, this.defaultTenant) === system)
      return trusted.origin;
    const base = this.base(req);
    if (system !== this.defaultTenant) base.hostname = `${system}.${base.hostname}`;
    return base.origin;
  }

  private base(req: Request): URL {
    if (this.configured !== undefined) return new URL(this.configured.origin);
    return new URL(`${req.protocol}://${this.baseHost}:${req.socket.localPort ?? 80}`);
  }

  /**
   * The origin the Host header names when it is the platform's: the base host or a subdomain of it with the
   * public port, or the connection's own local address and port.
   */
  private trustedOrigin(req: Request): URL | undefined {
    const host = req.headers.host;
    if (host === undefined || !URL.canParse(`http://${host}`)) return undefined;
    const base = this.base(req);
    const named = new URL(`${base.protocol}//${host}`);
    if (named.username !== '' || named.password !== '' || named.host !== host.toLowerCase()) return undefined;
    const baseHost = base.hostname;
    const ours =
      named.port === base.port &&
      (named.hostname === baseHost ||
        (named.hostname.endsWith(`.${baseHost}`) &&
          !named.hostname.slice(0, -baseHost.length - 1).includes('.') &&
          tenantFromHost(named.hostname, baseHost, this.defaultTenant) !== null));
    const address = req.socket.localAddress;
    const local =
      address?.startsWith('::ffff:') === true && address.includes('.') ? address.slice(7) : address;
    const connection =
      this.configured === undefined &&
      local !== undefined &&
      named.port === String(req.socket.localPort) &&
      (named.hostname === local || named.hostname === `[${local}]`);
    return ours || connection ? named : undefined;
  }
}
