import type { Request, Response } from 'express';

/** The session cookie (HttpOnly, SameSite=Lax, path /api). */
export const SESSION_COOKIE = 'rp_session';

/** A cookie's value from the Cookie header, if it is there and not empty. */
export function cookieValue(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator < 0 || part.slice(0, separator).trim() !== name) continue;
    const value = part.slice(separator + 1).trim();
    return value.length > 0 ? value : undefined;
  }
  return undefined;
}

/**
 * Sets an HttpOnly cookie, SameSite=Lax (Secure over https) unless `sameSite` says `None`: such a cookie is
 * sent on cross-site requests too, and browsers only accept it Secure, so it is Secure even over plain http
 * (where browsers keep it on localhost only). `maxAgeSeconds` 0 clears it.
 */
export function setCookie(
  req: Request,
  res: Response,
  cookie: { name: string; value: string; path: string; maxAgeSeconds: number; sameSite?: 'Lax' | 'None' },
): void {
  const sameSite = cookie.sameSite ?? 'Lax';
  const attributes = [
    `${cookie.name}=${cookie.value}`,
    `Path=${cookie.path}`,
    'HttpOnly',
    `SameSite=${sameSite}`,
    `Max-Age=${cookie.maxAgeSeconds}`,
    ...(req.secure || sameSite === 'None' ? ['Secure'] : []),
  ];
  res.append('Set-Cookie', attributes.join('; '));
}
