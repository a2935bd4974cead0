import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { FILE_FIELDS } from '../support/hook-requests';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filesHolding, filesUnder, replayAll } from '../support/erasure';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';

jest.setTimeout(120_000);

/** Crypto-shredding over HTTP: personal values sealed in the log, readable until erased, erased everywhere after. */
describe('erasing a record', () => {
  let platform: TestPlatform;
  let moduleId: number;

  beforeAll(async () => {
    platform = await startPlatform();
    const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'People' } }));
    moduleId = (
      await json<Entity>(
        await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Contacts' } }),
      )
    ).id;
    for (const field of [
      { name: 'Email', key: 'email', type: 'email' },
      { name: 'Notes', key: 'notes', type: 'text', personal: false },
      { name: 'Score', key: 'score', type: 'number', personal: true },
      { name: 'Stage', key: 'stage', type: 'text' },
    ])
      expect((await platform.call('POST', '/field', { body: { moduleId, ...field } })).status).toBe(201);
  });
  afterAll(() => platform.stop());

  /** A write that must pass; answers its body and the position it reached. */
  async function write<T = Entity>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ body: T; position: string }> {
    const response = await platform.call(method, path, body === undefined ? {} : { body });
    if (response.status >= 300)
      throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return { body: await json<T>(response), position: response.headers.get('x-position')! };
  }

  const read = (path: string, position: string) =>
    platform.call('GET', path, { headers: { 'X-Min-Position': position } });

  test('fields say whether they are personal: by type unless set; the setting can change', async () => {
    const fields = await json<Page<Entity & { key: string; personal: boolean }>>(
      await platform.call('GET', `/field?filter=${encodeURIComponent(`moduleId=${moduleId}`)}`),
    );
    const personal = Object.fromEntries(fields.items.map((field) => [field.key, field.personal]));
    expect(personal).toMatchObject({ email: true, notes: false, score: true, stage: true });
    const stage = fields.items.find((field) => field.key === 'stage')!;
    const changed = await write<{ personal: boolean }>('PUT', `/field/${stage.id}`, { personal: false });
    expect(changed.body.personal).toBe(false);
    expect(
      (await write<{ personal: boolean }>('PUT', `/field/${stage.id}`, { personal: true })).body.personal,
    ).toBe(true);
  });

  test('personal values are only ciphertext in the log; reads show them until the record is erased, then never again', async () => {
    const marker = `ada-${Date.now()}`;
    const created = await write('POST', '/record', {
      moduleId,
      name: `Ada ${marker}`,
      fields: { email: `${marker}@example.com`, notes: 'plain note', score: 42, stage: `lead-${marker}` },
    });
    const recordId = created.body.id;
    const updated = await write('PUT', `/record/${recordId}`, {
      fields: { stage: `won-${marker}`, notes: 'still plain' },
    });

    const before = await json<Entity & { name: string; fields: Record<string, unknown> }>(
      await read(`/record/${recordId}`, updated.position),
    );
    expect(before).toMatchObject({
      name: `Ada ${marker}`,
      fields: { email: `${marker}@example.com`, score: 42, stage: `won-${marker}` },
    });
    // The log holds the personal values sealed; what is not personal stays plain.
    const log = ['events.db', 'events.db-wal']
      .map((file) => readFileSync(join(platform.dataDir, file)).toString('latin1'))
      .join('');
    expect(log.includes(marker)).toBe(false);
    expect(log.includes('still plain')).toBe(true);

    const erased = await write<{ id: number; erased: boolean; fields: string[] }>(
      'POST',
      `/record/${recordId}/erase`,
      {
        reason: 'GDPR Art. 17 request #1',
      },
    );
    expect(erased.body).toEqual({ id: recordId, erased: true, fields: ['email', 'score', 'stage'] });
    const again = await write<{ fields: string[] }>('POST', `/record/${recordId}/erase`, {
      reason: 'repeat',
    });
    expect(again.body.fields).toEqual(['email', 'score', 'stage']);

    const after = await json<Entity & { name: string; fields: Record<string, unknown> }>(
      await read(`/record/${recordId}`, erased.position),
    );
    expect(after).toMatchObject({
      name: '[erased]',
      fields: { email: '[erased]', score: '[erased]', stage: '[erased]', notes: 'still plain' },
    });
    const past = await json(
      await read(`/record/${recordId}?atPosition=${created.position}`, erased.position),
    );
    expect(past).toMatchObject({ name: '[erased]', fields: { email: '[erased]', notes: 'plain note' } });
    const history = JSON.stringify(await json(await read(`/record/${recordId}/history`, erased.position)));
    expect(history).not.toContain(marker);
    expect(history).toContain('[erased]');
    const list = JSON.stringify(
      await json(
        await read(
          `/module/${moduleId}/item?asOf=${encodeURIComponent(new Date().toISOString())}`,
          erased.position,
        ),
      ),
    );
    expect(list).not.toContain(marker);
    const audit = JSON.stringify(await json(await read(`/audit?limit=100`, erased.position)));
    expect(audit).not.toContain(marker);
    expect(audit).toContain('GDPR Art. 17 request #1');

    // It takes no new personal values; what is not personal can still change, and it can be deleted.
    const refused = await platform.call('PUT', `/record/${recordId}`, {
      body: { fields: { email: 'new@example.com' } },
    });
    expect(refused.status).toBe(410);
    expect((await platform.call('DELETE', `/record/${recordId}`)).status).toBe(200);
  });

  test('only administrators erase, with a reason; an unknown record is a 404, a malformed id a 400', async () => {
    const record = await write('POST', '/record', { moduleId, name: 'Bob', fields: {} });
    const noReason = await platform.call('POST', `/record/${record.body.id}/erase`, { body: {} });
    expect(noReason.status).toBe(400);
    expect(JSON.stringify(await json(noReason))).toContain('reason');
    expect(
      (await platform.call('POST', `/record/${record.body.id}/erase`, { body: { reason: '   ' } })).status,
    ).toBe(400);
    expect((await platform.call('POST', '/record/987654/erase', { body: { reason: 'x' } })).status).toBe(404);
    expect((await platform.call('POST', '/record/01/erase', { body: { reason: 'x' } })).status).toBe(400);

    const member = await write<{ id: number }>('POST', '/user', {
      email: `member-${Date.now()}@example.com`,
      name: 'Member',
      role: 'member',
      password: 'a-long-enough-password-1',
    });
    const token = await write<{ token: string }>('POST', `/auth/${member.body.id}/token`, {
      name: 'member token',
    });
    const asMember = await fetch(`${platform.api}/record/${record.body.id}/erase`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token.body.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ reason: 'x' }),
    });
    expect(asMember.status).toBe(403);
  });

  test('after erasing, the plaintext is in no file under the data directory', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'erasure-'));
    const receiver = await startWebhookReceiver();
    // A receiver that fails at first: the record's deliveries wait in the queue (3 s) while it is erased.
    receiver.answer('/hook', { status: 503 });
    const own = await startPlatform({
      DATA_DIR: dataDir,
      OUTBOUND_ALLOW_PRIVATE: 'true',
      DELIVERY_RETRY_DELAYS_MS: '3000',
      SEMANTIC_SEARCH: 'true',
    });
    const call = async <T = Entity>(
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ) => {
      const response = await own.call(method, path, { ...(body !== undefined && { body }), headers });
      if (response.status >= 300)
        throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return { body: await json<T>(response), position: response.headers.get('x-position') ?? '0' };
    };
    const space = await call('POST', '/space', { name: 'Grep' });
    const module = await call('POST', '/module', { spaceId: space.body.id, name: 'Grep' });
    await call('POST', '/field', { moduleId: module.body.id, name: 'Email', key: 'email', type: 'email' });
    await call('POST', '/field', { moduleId: module.body.id, name: 'Stage', key: 'stage', type: 'text' });
    await call('POST', '/subscription', {
      name: 'Out',
      url: receiver.url('/hook'),
      events: ['record.created', 'record.updated'],
    });
    const marker = `zed-${Date.now()}`;
    const created = await call('POST', '/record', {
      moduleId: module.body.id,
      name: `Zed ${marker}`,
      fields: { email: `${marker}@example.org`, stage: `stage-${marker}` },
    });
    const recordId = created.body.id;
    let position = (await call('PUT', `/record/${recordId}`, { name: `Zed the second ${marker}` })).position;
    await call('GET', `/record/${recordId}`, undefined, { 'X-Min-Position': position });
    // The receiver got the values (sent opened) and failed; the queue keeps them, sealed.
    const [first] = await receiver.waitFor('/hook', 1);
    expect(first!.body).toContain(marker);
    expect(filesUnder(dataDir, marker).length).toBeGreaterThan(0);
    position = (await call('POST', `/record/${recordId}/erase`, { reason: 'request' })).position;
    await call('GET', `/record/${recordId}/history`, undefined, { 'X-Min-Position': position });
    // Tried again after the erasure, the deliveries carry the placeholder.
    receiver.answer('/hook', { status: 200 });
    const after = (await receiver.waitFor('/hook', 3, 20_000)).slice(1);
    for (const request of after) {
      expect(request.body).not.toContain(marker);
      expect(request.body).toContain('[erased]');
    }
    await own.stop();
    await receiver.close();
    try {
      expect(filesUnder(dataDir, marker)).toEqual([]);
      // A full replay of the records and their versions from the log shows the placeholder, and brings no
      // plaintext back.
      await replayAll(dataDir, ['records', 'record-versions']);
      expect(filesUnder(dataDir, marker)).toEqual([]);
      const again = await startPlatform({ DATA_DIR: dataDir });
      try {
        const replayed = await json<{ name: string; fields: Record<string, unknown> }>(
          await again.call('GET', `/record/${recordId}`),
        );
        expect(replayed).toMatchObject({
          name: '[erased]',
          fields: { email: '[erased]', stage: '[erased]' },
        });
      } finally {
        await again.stop();
      }
    } finally {
      if (!process.env.KEEP_ERASURE_DIR) rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('erasing a record made by hook requests erases those requests: their logs, runs, payload and file blobs, in every file', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hook-erasure-'));
    const own = await startPlatform({ DATA_DIR: dataDir });
    const call = async <T = Entity>(method: string, path: string, body?: unknown, position?: string) => {
      const response = await own.call(method, path, {
        ...(body !== undefined && { body }),
        headers: position === undefined ? {} : { 'X-Min-Position': position },
      });
      if (response.status >= 300)
        throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return { body: await json<T>(response), position: response.headers.get('x-position') ?? '0' };
    };
    try {
      const space = await call('POST', '/space', { name: 'Leads' });
      const module = await call('POST', '/module', { spaceId: space.body.id, name: 'Leads' });
      const moduleId = module.body.id;
      await call('POST', '/field', { moduleId, name: 'Email', key: 'email', type: 'email' });
      const fileField = await call('POST', '/field', { moduleId, name: 'Doc', key: 'doc', type: 'file' });
      const structure = await call('POST', '/data-structure', {
        name: 'A lead with a document',
        fields: [
          { name: 'name', type: 'text' },
          { name: 'email', type: 'text' },
          {
            name: 'doc',
            type: 'collection',
            fields: FILE_FIELDS,
          },
        ],
      });
      const hook = await call<Entity & { key: string }>('POST', '/webhook', {
        name: 'Leads',
        dataStructureId: structure.body.id,
      });
      const steps = [
        { kind: 'createRecord', moduleId, name: { expr: 'name' }, fields: { email: { expr: 'email' } } },
        {
          kind: 'webhookResponse',
          status: 200,
          body: { expr: '{"recordId": $step(0).recordId, "hi": name}' },
        },
      ];
      const scenario = await call('POST', '/scenario', { name: 'Leads', webhookId: hook.body.id, steps });
      const withFile = await call<Entity & { key: string }>('POST', '/webhook', {
        name: 'Documents',
        dataStructureId: structure.body.id,
      });
      await call('POST', '/scenario', {
        name: 'Documents',
        webhookId: withFile.body.id,
        steps: [
          { kind: 'createRecord', moduleId, name: { expr: 'name' }, fields: { email: { expr: 'email' } } },
          {
            kind: 'attachRecordFile',
            recordId: { expr: '$step(0).recordId' },
            file: { expr: 'doc' },
            fieldId: fileField.body.id,
          },
          { kind: 'webhookResponse', status: 200, body: { expr: '{"recordId": $step(0).recordId}' } },
        ],
      });

      const stamp = Date.now();
      const markers = { inline: `ivy-${stamp}`, large: `lou-${stamp}`, file: `fay-${stamp}` };
      const sent = async (key: string, body: string | FormData, type?: string) => {
        const response = await fetch(`${own.url}/hook/${key}`, {
          method: 'POST',
          ...(type !== undefined && { headers: { 'Content-Type': type } }),
          body,
        });
        expect(response.status).toBe(200);
        return (await json<{ recordId: number }>(response)).recordId;
      };
      const person = (marker: string) => ({ name: `Lead ${marker}`, email: `${marker}@example.net` });
      const inline = await sent(hook.body.key, JSON.stringify(person(markers.inline)), 'application/json');
      // Over 256 KB: the payload is kept in a blob, not in the event.
      const large = await sent(
        hook.body.key,
        JSON.stringify({ ...person(markers.large), padding: 'p'.repeat(300 * 1024) }),
        'application/json',
      );
      const form = new FormData();
      form.append('name', `Lead ${markers.file}`);
      form.append('email', `${markers.file}@example.net`);
      form.append('doc', new Blob([`%PDF-1.7 ${markers.file}`], { type: 'application/pdf' }), 'lead.pdf');
      const filed = await sent(withFile.body.key, form);

      const logs = async (position: string) => {
        const entries: Array<{ hookId: number; id: string }> = [];
        for (const hookId of [hook.body.id, withFile.body.id]) {
          const page = await call<Page<{ id: string }>>('GET', `/webhook/${hookId}/log`, undefined, position);
          entries.push(...page.body.items.map((entry) => ({ hookId, id: entry.id })));
        }
        return entries;
      };
      const detail = async (entry: { hookId: number; id: string }, position: string) =>
        (
          await call<Record<string, unknown>>(
            'GET',
            `/webhook/${entry.hookId}/log/${entry.id}`,
            undefined,
            position,
          )
        ).body;
      const head = (await call('GET', `/record/${filed}`)).position;
      const before = await logs(head);
      expect(before).toHaveLength(3);
      for (const marker of Object.values(markers))
        expect(filesUnder(dataDir, marker).length).toBeGreaterThan(0);
      const shownBefore = JSON.stringify(await Promise.all(before.map((entry) => detail(entry, head))));
      for (const marker of Object.values(markers)) expect(shownBefore).toContain(marker);

      let position = head;
      for (const recordId of [inline, large, filed])
        position = (await call('POST', `/record/${recordId}/erase`, { reason: 'Art. 17' })).position;
      // Repeating an erasure finishes the same and changes nothing.
      position = (await call('POST', `/record/${inline}/erase`, { reason: 'again' })).position;

      for (const entry of await logs(position))
        expect(await detail(entry, position)).toMatchObject({
          request: '[erased]',
          bundle: '[erased]',
          response: { status: 200, body: '[erased]' },
        });
      const runs = await call<Page<{ id: string }>>(
        'GET',
        `/scenario/${scenario.body.id}/run`,
        undefined,
        position,
      );
      expect(runs.body.items).toHaveLength(2);
      for (const run of runs.body.items) {
        const shown = await call<{ steps: Array<{ output: unknown }> }>(
          'GET',
          `/scenario/${scenario.body.id}/run/${run.id}`,
          undefined,
          position,
        );
        expect(shown.body.steps.map((step) => step.output)).toEqual(['[erased]', '[erased]']);
      }
      await own.stop();
      expect(filesHolding(dataDir, Object.values(markers))).toEqual({});
      // Rebuilt from the log, the logs and runs show the placeholder and bring no plaintext back.
      await replayAll(dataDir, ['hook-logs', 'scenario-runs', 'hook-queue']);
      for (const marker of Object.values(markers)) expect(filesUnder(dataDir, marker)).toEqual([]);
      const again = await startPlatform({ DATA_DIR: dataDir });
      try {
        const entries = await json<Page<{ id: string }>>(
          await again.call('GET', `/webhook/${hook.body.id}/log`),
        );
        for (const entry of entries.items) {
          const shown = await json(await again.call('GET', `/webhook/${hook.body.id}/log/${entry.id}`));
          expect(shown).toMatchObject({
            request: '[erased]',
            bundle: '[erased]',
            response: { body: '[erased]' },
          });
        }
      } finally {
        await again.stop();
      }
    } finally {
      await own.stop().catch(() => undefined);
      if (!process.env.KEEP_ERASURE_DIR) rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('erasing a user: their name and email are never in the log in clear, read as erased after, and the address is free again', async () => {
    const marker = `eve${Date.now()}`;
    const email = `${marker}@example.com`;
    const user = await write<{ id: number }>('POST', '/user', {
      email,
      name: `Eve ${marker}`,
      role: 'member',
      password: 'a-long-enough-password-1',
    });
    const token = await write<{ token: string }>('POST', `/auth/${user.body.id}/token`, {
      name: 'eve token',
    });
    const asEve = () =>
      fetch(`${platform.api}/user/${user.body.id}`, {
        headers: { Authorization: `Bearer ${token.body.token}` },
      });
    expect((await asEve()).status).toBe(200);
    const log = ['events.db', 'events.db-wal']
      .map((file) => readFileSync(join(platform.dataDir, file)).toString('latin1'))
      .join('');
    expect(log.includes(marker)).toBe(false);

    const erased = await write<{ name: string; email: string }>('POST', `/user/${user.body.id}/erase`, {
      reason: `Art. 17 for user ${user.body.id}`,
    });
    const audit = JSON.stringify(await json(await read('/audit?limit=20', erased.position)));
    expect(audit).toContain(`Art. 17 for user ${user.body.id}`);
    expect(erased.body).toMatchObject({ name: '[erased]', email: '[erased]' });
    const shown = await json(await read(`/user/${user.body.id}`, erased.position));
    expect(shown).toMatchObject({ name: '[erased]', email: '[erased]' });
    expect(JSON.stringify(await json(await read('/user?limit=100', erased.position)))).not.toContain(marker);
    expect((await asEve()).status).toBe(401);
    expect(
      (await platform.call('POST', `/user/${user.body.id}/erase`, { body: { reason: 'again' } })).status,
    ).toBe(200);
    expect((await platform.call('POST', `/user/${user.body.id}/activate`)).status).toBe(410);
    expect((await platform.call('POST', '/user/1/erase', { body: { reason: 'me' } })).status).toBe(409);
    expect((await platform.call('POST', '/user/987654/erase', { body: { reason: 'x' } })).status).toBe(404);
    // The address is free for someone else.
    const again = await platform.call('POST', '/user', {
      body: { email, name: 'New Eve', role: 'member', password: 'a-long-enough-password-2' },
    });
    expect(again.status).toBe(201);
  });
});
