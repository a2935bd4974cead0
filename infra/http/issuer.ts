import type { Request } from 'express';
import { contextOf } from './context';

/**
 * The OAuth issuer: this system's API at the platform's public address (RFC 8414, RFC 9207 `iss`); the
 * request's Host only where it is one of the platform's names (see PublicAddress), never as sent.
 */
export function issuerOf(req: Request): string {
  const { tenant, publicAddress } = contextOf(req);
  return `${publicAddress.originOf(req, tenant)}/api`;
}
