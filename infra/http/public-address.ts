import type { Request } from 'express';

/**
 * The platform's public address, for what it publishes about itself (the MCP servers' protected resource
 * metadata and `WWW-Authenticate`): `PUBLIC_URL` when configured, else `http://<BASE_HOST>:<the port the request
 * came in on>`. Never the request's Host header, which any client writes as it likes. A system's own address
 * (its API, its authorization server) is the same with `<system>.` before the host, the name that selects it.
 */
export class PublicAddress {
  private readonly configured: URL | undefined;

  constructor(
    publicUrl: string | undefined,
    private readonly baseHost: string,
  ) {
    this.configured = publicUrl === undefined ? undefined : new URL(publicUrl);
  }

  /** The platform's origin, such as `https://records.example.com`. */
  origin(req: Request): URL {
    if (this.configured !== undefined) return new URL(this.configured.origin);
    return new URL(`http://${this.baseHost}:${req.socket.localPort ?? 80}`);
  }

  /** The origin of `system`'s API, such as `https://acme.records.example.com`. */
  systemOrigin(req: Request, system: string): URL {
    const origin = this.origin(req);
    origin.hostname = `${system}.${origin.hostname}`;
    return origin;
  }
}
