import type { Request } from 'express';

/** The OAuth issuer: this API's own address, as the request reached it (RFC 8414, RFC 9207 `iss`). */
export function issuerOf(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}/api`;
}
