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

/** Sets an HttpOnly, SameSite=Lax cookie (Secure over https); `maxAgeSeconds` 0 clears it. */
export function setCookie(
  req: Request,
  res: Response,
  cookie: { name: string; value: string; path: string; maxAgeSeconds: number },
): void {
  const attributes = [
    `${cookie.name}=${cookie.value}`,
    `Path=${cookie.path}`,
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${cookie.maxAgeSeconds}`,
    ...(req.secure ? ['Secure'] : []),
  ];
  res.append('Set-Cookie', attributes.join('; '));
}
