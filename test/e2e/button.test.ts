import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

jest.setTimeout(60_000);

let hooks: Server;
let hookPort: number;
const pressed: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  hooks = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      pressed.push(JSON.parse(body) as Record<string, unknown>);
      res.writeHead(req.url === '/fails' ? 500 : 200).end('{}');
    });
  });
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
  hookPort = (hooks.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => hooks.close(resolve));
});

async function create(platform: TestPlatform, path: string, body: unknown): Promise<Entity> {
  const response = await platform.call('POST', path, { body });
  expect(response.status).toBe(201);
  return json<Entity>(response);
}

/** A module with a text field and buttons calling `paths` on the local hook server; one record. */
async function setUp(platform: TestPlatform, paths: string[]) {
  const space = await create(platform, '/space', { name: 'Buttons' });
  const module = await create(platform, '/module', { spaceId: space.id, name: 'Tickets' });
  const text = await create(platform, '/field', { moduleId: module.id, name: 'Title', type: 'text' });
  const buttons: Entity[] = [];
  for (const path of paths)
    buttons.push(
      await create(platform, '/field', {
        moduleId: module.id,
        name: `Notify ${path}`,
        type: 'button',
        config: { webhookUrl: `http://localhost:${hookPort}${path}` },
      }),
    );
  const record = await create(platform, '/record', {
    moduleId: module.id,
    name: 'Printer',
    fields: { title: 'jam' },
  });
  return { text, buttons, record };
}

describe('pressing a button field (private addresses allowed for the test)', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startPlatform({ OUTBOUND_ALLOW_PRIVATE: 'true', OUTBOUND_TIMEOUT_MS: '2000' });
  });

  afterAll(async () => {
    await platform.stop();
  });

  test('posts the record to the webhook, answers what it said, and records the press', async () => {
    const { buttons, record, text } = await setUp(platform, ['/ok', '/fails']);
    const [ok, failing] = buttons;
    const response = await platform.call('POST', `/record/${record.id}/button/${ok!.id}`);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({
      recordId: record.id,
      fieldId: ok!.id,
      ok: true,
      status: 200,
      body: '{}',
    });
    expect(pressed.at(-1)).toMatchObject({
      event: 'button.pressed',
      system: 'test',
      field: { id: ok!.id },
      record: { id: record.id, name: 'Printer', fields: { title: 'jam' } },
      pressedBy: '1',
    });

    const refused = await json(await platform.call('POST', `/record/${record.id}/button/${failing!.id}`));
    expect(refused).toMatchObject({ ok: false, status: 500 });

    const history = await json<{ items: Array<Record<string, unknown>> }>(
      await platform.call('GET', `/record/${record.id}/history?filter=type=ButtonPressed`),
    );
    expect(history.items.map((entry) => (entry.data as { ok: boolean }).ok)).toEqual([false, true]);

    expect((await platform.call('POST', `/record/${record.id}/button/${text.id}`)).status).toBe(400);
    expect((await platform.call('POST', `/record/${record.id}/button/99999`)).status).toBe(404);
    expect((await platform.call('POST', `/record/99999/button/${ok!.id}`)).status).toBe(404);
  });

  test('a webhook that does not answer is a 502, and the failed press is recorded', async () => {
    const space = await create(platform, '/space', { name: 'Down' });
    const module = await create(platform, '/module', { spaceId: space.id, name: 'Tickets' });
    const button = await create(platform, '/field', {
      moduleId: module.id,
      name: 'Nobody',
      type: 'button',
      config: { webhookUrl: 'http://localhost:9/hook' },
    });
    const record = await create(platform, '/record', { moduleId: module.id, name: 'x' });
    const response = await platform.call('POST', `/record/${record.id}/button/${button.id}`);
    expect(response.status).toBe(502);
    expect((await json(response)).code).toBe('E5020');
    const history = await json<{ items: Array<Record<string, unknown>> }>(
      await platform.call('GET', `/record/${record.id}/history?filter=type=ButtonPressed`),
    );
    expect(history.items.map((entry) => entry.data)).toEqual([
      expect.objectContaining({ ok: false, status: null, error: expect.any(String) }),
    ]);
  });
});

test('by default the SSRF guard refuses a button webhook on a private address: 400, nothing sent', async () => {
  const platform = await startPlatform();
  try {
    const { buttons, record } = await setUp(platform, ['/guarded']);
    const before = pressed.length;
    const response = await platform.call('POST', `/record/${record.id}/button/${buttons[0]!.id}`);
    expect(response.status).toBe(400);
    expect((await json<{ message: string }>(response)).message).toMatch(/not allowed/);
    expect(pressed.length).toBe(before);
  } finally {
    await platform.stop();
  }
});

test("a button aimed at one of this platform's hooks delivers to it directly and answers with its response", async () => {
  // The SSRF guard is on: the hook's address (loopback here) is not called over the network.
  const platform = await startPlatform();
  try {
    const hook = await json<Entity & { url: string }>(
      await platform.call('POST', '/webhook', { body: { name: 'Pressed' } }),
    );
    await create(platform, '/scenario', {
      name: 'Acknowledge',
      webhookId: hook.id,
      steps: [
        {
          kind: 'webhookResponse',
          status: 201,
          body: { expr: 'record.name & " pressed by " & pressedBy & " from " & source' },
        },
      ],
    });
    const space = await create(platform, '/space', { name: 'Own hooks' });
    const module = await create(platform, '/module', { spaceId: space.id, name: 'Tickets' });
    const button = await create(platform, '/field', {
      moduleId: module.id,
      name: 'Acknowledge',
      type: 'button',
      config: { webhookUrl: `${hook.url}?source=button` },
    });
    const record = await create(platform, '/record', { moduleId: module.id, name: 'Printer' });
    const press = () => platform.call('POST', `/record/${record.id}/button/${button.id}`);

    expect(await json(await press())).toEqual({
      recordId: record.id,
      fieldId: button.id,
      ok: true,
      status: 201,
      body: 'Printer pressed by 1 from button',
    });
    // The hook's log has the press, as any request.
    const logs = await json<{ items: Array<{ status: string; method: string }> }>(
      await platform.call('GET', `/webhook/${hook.id}/log`, { headers: { 'X-Min-Position': '0' } }),
    );
    expect(logs.items.map((entry) => [entry.status, entry.method])).toEqual([['success', 'POST']]);

    // Its rules hold: a disabled hook refuses the press as it refuses any caller.
    expect((await platform.call('POST', `/webhook/${hook.id}/disable`)).status).toBe(200);
    expect(await json(await press())).toMatchObject({
      ok: false,
      status: 403,
      body: 'This hook is disabled.',
    });
  } finally {
    await platform.stop();
  }
});
