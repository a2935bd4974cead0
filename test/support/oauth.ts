import { json, type TestPlatform } from './platform';

/** A registered OAuth client as its creation answers it (the secret is shown this once). */
export interface OAuthClient {
  clientId: string;
  clientSecret: string;
}

export async function registerClient(
  platform: TestPlatform,
  body: Record<string, unknown>,
): Promise<OAuthClient> {
  const response = await platform.call('POST', '/auth/oauth/client', {
    body: { clientName: 'App', ...body },
  });
  expect(response.status).toBe(201);
  return json<OAuthClient>(response);
}

/** POST to a token-style endpoint (`/auth/oauth/token`, `renew`, `revoke`, `introspect`) as a form, with HTTP Basic. */
export function tokenRequest(
  platform: TestPlatform,
  path: string,
  client: Pick<OAuthClient, 'clientId'>,
  form: Record<string, string>,
  secret: string,
): Promise<Response> {
  return fetch(`${platform.api}${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${client.clientId}:${secret}`).toString('base64')}`,
    },
    body: new URLSearchParams(form).toString(),
  });
}
