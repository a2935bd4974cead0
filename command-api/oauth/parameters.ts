import { OAuthError } from '../../contracts/oauth';

/**
 * One parameter of an OAuth request (its query string or its form): absent, or exactly one string (a repeated
 * parameter is refused).
 */
export function param(source: unknown, name: string): string | undefined {
  const value = (source as Record<string, unknown> | undefined)?.[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw new OAuthError('invalid_request', `${name} must be given once, as text`);
  return value;
}
