import type { Request } from 'express';

/** The session cookie (HttpOnly, SameSite=Lax, path /api). */
export const SESSION_COOKIE = 'rp_session';

/** The session id from the Cookie header, if there is one. */
export function sessionCookie(req: Request): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator < 0) continue;
    if (part.slice(0, separator).trim() === SESSION_COOKIE) {
      const value = part.slice(separator + 1).trim();
      return value.length > 0 ? value : undefined;
    }
  }
  return undefined;
}
