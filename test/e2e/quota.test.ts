import { json, startPlatform, type TestPlatform } from '../support/platform';

let platform: TestPlatform;

beforeAll(async () => {
  platform = await startPlatform({ QUOTA_CALLS_PER_MINUTE: '5' });
});

afterAll(async () => {
  await platform.stop();
});

test('a system over its per-minute quota gets 429 with RateLimit-* and Retry-After', async () => {
  const anonymous = await fetch(`${platform.api}/space`);
  expect(anonymous.status).toBe(401);
  expect(anonymous.headers.get('ratelimit-limit')).toBeNull();
  const statuses: number[] = [];
  let last: Response | undefined;
  for (let i = 0; i < 7; i++) {
    last = await platform.call('GET', '/space');
    statuses.push(last.status);
    if (last.status === 200) expect(Number(last.headers.get('ratelimit-remaining'))).toBe(4 - i);
  }
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
  expect(last!.headers.get('ratelimit-limit')).toBe('5');
  expect(last!.headers.get('ratelimit-remaining')).toBe('0');
  expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
  expect((await json(last!)).code).toBe('E4290');
});
