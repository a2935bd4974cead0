/**
 * Issue 4 figures:
 * - authenticated `GET /record/{id}`: p50 with an API token and with an OAuth access token, each against the
 *   bootstrap admin token (target: at most 0.3 ms more), requests interleaved so drift hits all three alike;
 * - `POST /auth/oauth/token` code exchanges per second (target ≥ 500), codes issued beforehand.
 */
import { machineConditions, percentile, printFigure } from './report';
import { api, runAgainstPlatform, TOKEN } from './server';

const ROUNDS = 3000;
const EXCHANGES = 3000;
const CONCURRENCY = 16;
const REDIRECT = 'https://bench.example/cb';

runAgainstPlatform('bench-auth-', async (server) => {
  const space = await api<{ id: number }>(server.url, 'POST', '/space', { name: 'Auth bench' });
  const module = await api<{ id: number }>(server.url, 'POST', '/module', {
    spaceId: space.body.id,
    name: 'M',
  });
  const record = await api<{ id: number }>(server.url, 'POST', '/record', {
    moduleId: module.body.id,
    name: 'R',
  });
  const apiToken = await api<{ token: string }>(server.url, 'POST', '/auth/1/token', { name: 'bench' });
  const client = await api<{ clientId: string; clientSecret: string }>(
    server.url,
    'POST',
    '/auth/oauth/client',
    {
      clientName: 'Bench',
      redirectUris: [REDIRECT],
    },
  );
  const { clientId, clientSecret } = client.body;

  const newCode = async (): Promise<string> => {
    const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT });
    const response = await fetch(`${server.url}/api/auth/oauth/authorize?${query.toString()}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      redirect: 'manual',
    });
    return new URL(response.headers.get('location')!).searchParams.get('code')!;
  };
  const exchange = (code: string) =>
    fetch(`${server.url}/api/auth/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
      }).toString(),
    });
  const oauth = (await (await exchange(await newCode())).json()) as { access_token: string };

  const credentials = { bootstrap: TOKEN, apiToken: apiToken.body.token, oauth: oauth.access_token };
  const timings: Record<keyof typeof credentials, number[]> = { bootstrap: [], apiToken: [], oauth: [] };
  const path = `${server.url}/api/record/${record.body.id}`;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, token] of Object.entries(credentials) as Array<[keyof typeof credentials, string]>) {
      const started = performance.now();
      const response = await fetch(path, { headers: { authorization: `Bearer ${token}` } });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${name}: GET answered ${response.status}`);
      timings[name].push(performance.now() - started);
    }
  }
  const p50 = (name: keyof typeof credentials) =>
    percentile(
      [...timings[name]].sort((a, b) => a - b),
      50,
    );
  const base = p50('bootstrap');
  printFigure('get_record_bootstrap_token_p50', base, 'ms', undefined, `${ROUNDS} sequential requests`);
  for (const name of ['apiToken', 'oauth'] as const)
    printFigure(
      `get_record_${name}_extra_p50`,
      p50(name) - base,
      'ms',
      '<= 0.3',
      `p50 ${p50(name).toFixed(3)} ms vs ${base.toFixed(3)} ms`,
    );

  const codes: string[] = [];
  for (let index = 0; index < EXCHANGES; index++) codes.push(await newCode());
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < codes.length) {
        const response = await exchange(codes[next++]!);
        await response.arrayBuffer();
        if (response.status !== 200) failures += 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  if (failures > 0) throw new Error(`${failures} code exchanges failed`);
  printFigure(
    'oauth_code_exchange',
    Math.round(EXCHANGES / seconds),
    'exchanges/s',
    '>= 500',
    `${EXCHANGES} codes, ${CONCURRENCY} in flight, ${machineConditions()}`,
  );
});
