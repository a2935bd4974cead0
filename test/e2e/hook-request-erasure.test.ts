import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filesHolding, filesUnder, replayAll } from '../support/erasure';
import { FILE_FIELDS } from '../support/hook-requests';
import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';

jest.setTimeout(120_000);

interface LogDetail {
  id: string;
  status: string;
  request: unknown;
  bundle: unknown;
  response: { status: number; body: string };
}

/**
 * `POST /webhook/{webhookId}/log/{requestId}/erase`: a request is erased on its own, whatever became of it: run
 * without writing a record, waiting in the queue (its payload and file in blobs), or refused.
 */
describe("erasing a hook request's data", () => {
  let platform: TestPlatform;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'request-erasure-'));
    platform = await startPlatform({ DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await platform.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A call that must pass: its body and the position it reached. */
  async function call<T = Entity>(method: string, path: string, body?: unknown, position?: string) {
    const response = await platform.call(method, path, {
      ...(body !== undefined && { body }),
      headers: position === undefined ? {} : { 'X-Min-Position': position },
    });
    if (response.status >= 300)
      throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return { body: await json<T>(response), position: response.headers.get('x-position') ?? '0' };
  }

  const send = (key: string, body: string | FormData, type?: string) =>
    fetch(`${platform.url}/hook/${key}`, {
      method: 'POST',
      ...(type !== undefined && { headers: { 'Content-Type': type } }),
      body,
    });

  test('run, queued and refused requests: their data reads as erased everywhere, their blobs are gone, the queue lets go', async () => {
    const structure = await call('POST', '/data-structure', {
      name: 'A lead',
      fields: [
        { name: 'name', type: 'text' },
        { name: 'age', type: 'number' },
        { name: 'doc', type: 'collection', fields: FILE_FIELDS },
      ],
    });
    const answering = await call<Entity & { key: string }>('POST', '/webhook', {
      name: 'Answers',
      dataStructureId: structure.body.id,
    });
    await call('POST', '/scenario', {
      name: 'Greets',
      webhookId: answering.body.id,
      steps: [{ kind: 'webhookResponse', status: 200, body: { expr: '{"hi": name}' } }],
    });
    // No scenario: what it receives waits in its queue.
    const waiting = await call<Entity & { key: string }>('POST', '/webhook', {
      name: 'Waits',
      dataStructureId: structure.body.id,
    });

    const stamp = Date.now();
    const markers = {
      ran: `ran-${stamp}`,
      refused: `refused-${stamp}`,
      queued: `queued-${stamp}`,
      large: `large-${stamp}`,
      file: `file-${stamp}`,
    };
    const ran = await send(answering.body.key, JSON.stringify({ name: markers.ran }), 'application/json');
    expect(ran.status).toBe(200);
    expect(await ran.text()).toContain(markers.ran);
    const refused = await send(
      answering.body.key,
      JSON.stringify({ name: 'x', age: markers.refused }),
      'application/json',
    );
    expect(refused.status).toBe(400);
    expect(
      (await send(waiting.body.key, JSON.stringify({ name: markers.queued }), 'application/json')).status,
    ).toBe(200);
    // Over 256 KB: the payload is kept in a blob.
    const large = JSON.stringify({ name: markers.large, padding: 'p'.repeat(300 * 1024) });
    expect((await send(waiting.body.key, large, 'application/json')).status).toBe(200);
    const form = new FormData();
    form.append('name', markers.file);
    form.append('doc', new Blob([`%PDF-1.7 ${markers.file}`], { type: 'application/pdf' }), 'lead.pdf');
    expect((await send(waiting.body.key, form)).status).toBe(200);

    const head = (await call('GET', '/webhook')).position;
    const entries = async (hookId: number, position: string) =>
      (await call<Page<{ id: string }>>('GET', `/webhook/${hookId}/log`, undefined, position)).body.items;
    const detail = async (hookId: number, requestId: string, position: string) =>
      (await call<LogDetail>('GET', `/webhook/${hookId}/log/${requestId}`, undefined, position)).body;
    const logged: Array<{ hookId: number; id: string; shown: string }> = [];
    for (const hookId of [answering.body.id, waiting.body.id])
      for (const entry of await entries(hookId, head))
        logged.push({ hookId, id: entry.id, shown: JSON.stringify(await detail(hookId, entry.id, head)) });
    expect(logged).toHaveLength(5);
    const entryOf = (marker: string) => logged.find((entry) => entry.shown.includes(marker))!;
    for (const marker of Object.values(markers)) {
      expect(entryOf(marker)).toBeDefined();
      expect(filesUnder(dataDir, marker).length).toBeGreaterThan(0);
    }
    const queue = await call<Page<{ requestId: string }>>(
      'GET',
      `/webhook/${waiting.body.id}/queue`,
      undefined,
      head,
    );
    expect(queue.body.items).toHaveLength(3);

    // Bad input first: a reason is required, only administrators erase, ids in their canonical form.
    const { hookId, id } = entryOf(markers.refused);
    const erase = (path: string, body: unknown) => platform.call('POST', path, { body });
    const noReason = await erase(`/webhook/${hookId}/log/${id}/erase`, {});
    expect(noReason.status).toBe(400);
    expect(await noReason.text()).toContain('reason');
    expect((await erase(`/webhook/${hookId}/log/${id}/erase`, { reason: '  ' })).status).toBe(400);
    expect((await erase(`/webhook/${hookId}/log/not-a-uuid/erase`, { reason: 'x' })).status).toBe(400);
    expect((await erase(`/webhook/${hookId}/log/${id.toUpperCase()}/erase`, { reason: 'x' })).status).toBe(
      400,
    );
    expect((await erase(`/webhook/0${hookId}/log/${id}/erase`, { reason: 'x' })).status).toBe(400);
    expect((await erase(`/webhook/987654/log/${id}/erase`, { reason: 'x' })).status).toBe(404);
    // A request of another hook, and one that never came.
    expect((await erase(`/webhook/${waiting.body.id}/log/${id}/erase`, { reason: 'x' })).status).toBe(404);
    expect(
      (await erase(`/webhook/${hookId}/log/00000000-0000-4000-8000-000000000000/erase`, { reason: 'x' }))
        .status,
    ).toBe(404);
    const member = await call<{ id: number }>('POST', '/user', {
      email: `member-${stamp}@example.com`,
      name: 'Member',
      role: 'member',
      password: 'a-long-enough-password-1',
    });
    const token = await call<{ token: string }>('POST', `/auth/${member.body.id}/token`, { name: 'member' });
    const asMember = await fetch(`${platform.api}/webhook/${hookId}/log/${id}/erase`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token.body.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ reason: 'x' }),
    });
    expect(asMember.status).toBe(403);

    let position = head;
    const answers: Record<string, { runs: string[] }> = {};
    for (const [name, marker] of Object.entries(markers)) {
      const entry = entryOf(marker);
      const erased = await call<{ webhookId: number; requestId: string; erased: true; runs: string[] }>(
        'POST',
        `/webhook/${entry.hookId}/log/${entry.id}/erase`,
        { reason: `Art. 17 (${name})` },
      );
      expect(erased.body).toMatchObject({ webhookId: entry.hookId, requestId: entry.id, erased: true });
      answers[name] = erased.body;
      position = erased.position;
    }
    expect(answers.ran!.runs).toEqual([entryOf(markers.ran).id]);
    expect(answers.refused!.runs).toEqual([]);
    expect(answers.queued!.runs).toEqual([]);
    // Erasing again answers the same.
    const again = entryOf(markers.ran);
    expect(
      (await call('POST', `/webhook/${again.hookId}/log/${again.id}/erase`, { reason: 'again' })).body,
    ).toEqual({ webhookId: again.hookId, requestId: again.id, erased: true, runs: [again.id] });

    for (const entry of logged) {
      const shown = await detail(entry.hookId, entry.id, position);
      expect(shown).toMatchObject({ request: '[erased]', bundle: '[erased]' });
      for (const marker of Object.values(markers)) expect(JSON.stringify(shown)).not.toContain(marker);
    }
    expect((await detail(hookId, id, position)).response).toMatchObject({ status: 400, body: '[erased]' });
    // The queued requests left the queue: nothing is left of them to run.
    expect(
      (await call<Page<unknown>>('GET', `/webhook/${waiting.body.id}/queue`, undefined, position)).body.items,
    ).toEqual([]);
    const audit = await call<Page<{ type: string; data: { reason: string; requestId: string } }>>(
      'GET',
      '/audit?filter=type=WebhookRequestErased',
      undefined,
      position,
    );
    expect(audit.body.items.map((item) => item.data.reason).sort()).toEqual(
      Object.keys(markers)
        .map((name) => `Art. 17 (${name})`)
        .sort(),
    );

    await platform.stop();
    expect(filesHolding(dataDir, Object.values(markers))).toEqual({});
    // Rebuilt from the log, the logs, runs and queue show the placeholder and bring no plaintext back.
    await replayAll(dataDir, ['hook-logs', 'scenario-runs', 'hook-queue']);
    for (const marker of Object.values(markers)) expect(filesUnder(dataDir, marker)).toEqual([]);
    platform = await startPlatform({ DATA_DIR: dataDir });
    for (const entry of logged)
      expect(await detail(entry.hookId, entry.id, '0')).toMatchObject({
        request: '[erased]',
        bundle: '[erased]',
      });
  });
});
