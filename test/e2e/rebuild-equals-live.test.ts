import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { totpCode } from '../../command-api/identity/totp';
import { READ_MODELS } from '../../contracts/read-models';
import { createSqliteEventStore } from '../../infra/event-store/sqlite';
import { polling } from '../support/eventually';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';
import { startHeldServer } from '../support/held-server';
import { writeOlderReleaseModule } from '../support/older-release';
import { ADMIN_TOKEN, json, startPlatform, type Entity, type TestPlatform } from '../support/platform';
import { rebuildProjections, waitForAllProjections } from '../support/rebuild';

jest.setTimeout(180_000);

let dataDir: string;
let platform: TestPlatform | undefined;
let hooks: Server;
let model: FakeOpenAi;

beforeAll(async () => {
  model = await startFakeOpenAi();
  model.chatReply = (request) =>
    request.messages[0]!.content.includes('"valid"')
      ? JSON.stringify({ valid: false, reason: 'too round' })
      : JSON.stringify({ value: 'Rolled out' });
  hooks = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end('{}'));
  });
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
  dataDir = mkdtempSync(join(tmpdir(), 'records-rebuild-equals-live-'));
});

afterAll(async () => {
  await platform?.stop();
  await new Promise((resolve) => hooks.close(resolve));
  await model.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A write that must succeed with `status`; its answer. */
async function write(method: string, path: string, body?: unknown, status = 200): Promise<Entity> {
  const response = await platform!.call(method, path, body === undefined ? {} : { body });
  const answer = await json<Entity>(response);
  expect({ method, path, status: response.status, answer }).toEqual({ method, path, status, answer });
  return answer;
}

const create = (path: string, body: unknown): Promise<Entity> => write('POST', path, body, 201);
const eventually = polling(30_000);

/** Every resource family the platform has, created, changed and deleted through HTTP. */
async function driveEveryResource(hookUrl: string): Promise<void> {
  const sales = await create('/space', { name: 'Sales', description: 'Pipeline' });
  await write('PUT', `/space/${sales.id}`, { description: 'All deals' });
  const doomedSpace = await create('/space', { name: 'Temporary' });
  await write('DELETE', `/space/${doomedSpace.id}`);

  const contacts = await create('/module', { spaceId: sales.id, template: 'contacts' });
  const deals = await create('/module', { spaceId: sales.id, template: 'deals', name: 'Pipeline' });
  const projects = await create('/module', { spaceId: sales.id, name: 'Projects' });
  await write('PUT', `/module/${projects.id}`, { description: 'Delivery' });
  const doomedModule = await create('/module', { spaceId: sales.id, name: 'Scratch' });
  await create('/field', { moduleId: doomedModule.id, name: 'Note', type: 'text' });
  await write('DELETE', `/module/${doomedModule.id}`);

  const budget = await create('/field', { moduleId: projects.id, name: 'Budget', type: 'decimal' });
  const client = await create('/field', {
    moduleId: projects.id,
    name: 'Client',
    type: 'relation',
    config: { moduleId: contacts.id },
  });
  const tags = await create('/field', {
    moduleId: projects.id,
    name: 'Tags',
    type: 'multi_select',
    config: { options: ['urgent', 'internal'] },
  });
  const notify = await create('/field', {
    moduleId: projects.id,
    name: 'Notify',
    type: 'button',
    config: { webhookUrl: hookUrl },
  });
  const dropped = await create('/field', { moduleId: projects.id, name: 'Dropped', type: 'text' });
  await write('PUT', `/field/${budget.id}`, { required: false, config: { scale: 0, min: 0 } });
  await write('PUT', '/field/order/', {
    moduleId: projects.id,
    fieldIds: [tags.id, budget.id, client.id, notify.id, dropped.id],
  });
  await write('DELETE', `/field/${dropped.id}`);
  const contactFields = await json<{ items: Entity[] }>(
    await platform!.call('GET', `/field?filter=moduleId=${contacts.id};key=email`),
  );
  await write('PUT', `/field/${contactFields.items[0]!.id}`, { name: 'E-mail' });

  const ana = await create('/record', {
    moduleId: contacts.id,
    name: 'Ana',
    fields: { email: 'ana@example.com', lifecycle_stage: 'Lead' },
  });
  const rollout = await create('/record', {
    moduleId: projects.id,
    name: 'Rollout',
    fields: { budget: 5000, client: ana.id, tags: ['urgent'] },
  });
  await write('PUT', `/record/${rollout.id}`, { name: 'Rollout 2', fields: { tags: null, budget: 6000 } });
  await write('POST', `/record/${rollout.id}/button/${notify.id}`);
  const attachments = await create('/field', { moduleId: projects.id, name: 'Attachments', type: 'file' });
  const upload = async (query: string, bytes: string): Promise<Entity> => {
    const response = await fetch(`${platform!.api}/record/${rollout.id}/file?${query}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'text/plain' },
      body: bytes,
    });
    expect(response.status).toBe(201);
    return json<Entity>(response);
  };
  const brief = await upload(`name=brief.txt&fieldId=${attachments.id}`, 'the brief');
  const notes = await upload('name=notes.txt', 'some notes');
  const draft = await upload(`name=draft.txt&fieldId=${attachments.id}`, 'a draft');
  await write('PUT', `/record/${rollout.id}/file-weight`, {
    files: [
      { fileId: notes.id, weight: 0 },
      { fileId: brief.id, weight: 9 },
    ],
  });
  await write('DELETE', `/record/${rollout.id}/file/${draft.id}`);
  const deal = await create('/record', { moduleId: deals.id, name: 'Acme', fields: { stage: 'Proposal' } });
  await write('DELETE', `/record/${deal.id}`);
  await write('POST', `/record/${deal.id}/restore`);
  const gone = await create('/record', { moduleId: deals.id, name: 'Lost one', fields: { stage: 'Lost' } });
  await write('DELETE', `/record/${gone.id}`);

  const vip = await create('/label', { name: 'VIP', color: '#ff0000' });
  const cold = await create('/label', { name: 'Cold' });
  await write('PUT', `/label/${vip.id}`, { color: '#00ff00' });
  await write('POST', `/record/${ana.id}/label/${vip.id}`);
  await write('POST', `/record/${ana.id}/label/${cold.id}`);
  await write('POST', `/record/${rollout.id}/label/${cold.id}`);
  await write('DELETE', `/record/${rollout.id}/label/${cold.id}`);
  await write('DELETE', '/label', { id: cold.id });

  const segment = await create('/segment', { spaceId: sales.id, name: 'Rollouts', filter: 'name~Roll%' });
  await write('PUT', `/segment/${segment.id}`, { order: 'name;ASC' });
  const doomedSegment = await create('/segment', { spaceId: sales.id, name: 'Old' });
  await write('DELETE', `/segment/${doomedSegment.id}`);

  const products = await create('/category', { name: 'Products' });
  const hardware = await create('/category', { name: 'Hardware', parentId: products.id });
  await write('PUT', `/category/${hardware.id}`, { description: 'Things' });
  const doomedCategory = await create('/category', { name: 'Old', parentId: products.id });
  await write('DELETE', `/category/${doomedCategory.id}`);
  const team = await create('/team', { name: 'Sales team', userIds: [1] });
  await write('PUT', `/team/${team.id}`, { description: 'Closers' });
  const doomedTeam = await create('/team', { name: 'Gone' });
  await write('DELETE', `/team/${doomedTeam.id}`);
  const menu = await create('/menu', {
    name: 'Main',
    items: [
      { label: 'Contacts', moduleId: contacts.id },
      { label: 'Help', url: 'https://example.com/help' },
    ],
  });
  await write('PUT', `/menu/${menu.id}`, { position: 2 });
  const group = await create('/field-group', {
    moduleId: projects.id,
    name: 'Money',
    fieldIds: [budget.id, client.id],
  });
  await write('PUT', `/field-group/${group.id}`, { fieldIds: [budget.id] });
  const doomedGroup = await create('/field-group', { moduleId: projects.id, name: 'Empty' });
  await write('DELETE', `/field-group/${doomedGroup.id}`);

  const mia = await create('/user', {
    email: 'mia@example.com',
    name: 'Mia',
    password: 'a long enough password',
  });
  await write('PUT', `/user/${mia.id}`, { permissions: { record: ['read'] } });
  const miaToken = await create(`/auth/${mia.id}/token`, { name: 'CI', permissions: { record: ['read'] } });
  await write('PUT', `/auth/${mia.id}/token/${String(miaToken.id)}`, { name: 'CI 2' });
  const signIn = () =>
    write('POST', '/auth', { email: 'mia@example.com', password: 'a long enough password' });
  const kept = await signIn();
  const asMia = { headers: { Authorization: `Bearer ${String(kept.session)}` } };
  const phone = await json<Entity>(
    await platform!.call('POST', `/user/${mia.id}/2fa`, {
      ...asMia,
      body: { name: 'Phone', password: 'a long enough password' },
    }),
  );
  const confirmedTwoFactor = await platform!.call('POST', `/user/${mia.id}/2fa/${phone.id}/confirm`, {
    ...asMia,
    body: { code: totpCode(String(phone.secret), Math.floor(Date.now() / 1000)) },
  });
  const confirmedBody = await json(confirmedTwoFactor);
  expect({ status: confirmedTwoFactor.status, confirmedBody }).toEqual({ status: 200, confirmedBody });
  await platform!.call('POST', `/user/${mia.id}/2fa/recovery-codes`, {
    ...asMia,
    body: { password: 'a long enough password' },
  });
  await platform!.call('DELETE', `/user/${mia.id}/2fa/${phone.id}`);
  const ended = await signIn();
  const signOut = await platform!.call('DELETE', '/auth', {
    headers: { Authorization: `Bearer ${String(ended.session)}` },
  });
  expect(signOut.status).toBe(200);
  await write('POST', `/user/${mia.id}/deactivate`);
  await write('POST', `/user/${mia.id}/activate`);
  // Deactivation ended Mia's sessions: one that stays live.
  await signIn();

  const oauthClient = await create('/auth/oauth/client', {
    clientName: 'CRM sync',
    redirectUris: ['https://crm.example/callback'],
  });
  await write('PUT', `/auth/oauth/client/${String(oauthClient.clientId)}`, {
    scope: 'record:read',
    regenerateSecret: true,
  });
  const authorized = await fetch(
    `${platform!.api}/auth/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: String(oauthClient.clientId),
      redirect_uri: 'https://crm.example/callback',
    }).toString()}`,
    { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` }, redirect: 'manual' },
  );
  const code = new URL(authorized.headers.get('location')!).searchParams.get('code')!;
  const exchanged = await platform!.call('POST', '/auth/oauth/token', {
    body: {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://crm.example/callback',
      client_id: oauthClient.clientId,
      client_secret: (
        await json<Entity>(
          await platform!.call('PUT', `/auth/oauth/client/${String(oauthClient.clientId)}`, {
            body: { regenerateSecret: true },
          }),
        )
      ).clientSecret,
    },
  });
  expect(exchanged.status).toBe(200);
  const doomedClient = await create('/auth/oauth/client', {
    clientName: 'Old',
    redirectUris: ['https://old.example/cb'],
  });
  await write('DELETE', `/auth/oauth/client/${String(doomedClient.clientId)}`);

  const remote = '/record/remote/crm-17/hubspot';
  await write('POST', remote, { recordId: ana.id });
  await write('POST', remote, { recordId: rollout.id });

  const bulk = await write('POST', '/record/bulk', {
    items: [
      { moduleId: contacts.id, name: 'Bo', fields: { phone: '+4912345' } },
      { moduleId: contacts.id, name: 'Cy' },
      { moduleId: contacts.id, name: 'Dee' },
    ],
  });
  const [bo, cy, dee] = (bulk.items as Array<{ id: number }>).map((item) => item.id);
  await write('PUT', '/record/bulk', {
    items: [
      { id: bo, fields: { job_title: 'CTO' } },
      { id: cy, name: 'Cyd' },
    ],
  });
  await write('DELETE', '/record/bulk', { ids: [dee] });

  // Webhooks: one whose request waits in its queue (validated by a reusable structure, changed once), one whose
  // scenario runs and answers.
  const structure = await create('/data-structure', {
    name: 'Parked',
    fields: [{ name: 'n', type: 'text' }],
  });
  await write('PUT', `/data-structure/${structure.id}`, { fields: [{ name: 'n', type: 'number' }] });
  const parked = await create('/webhook', {
    name: 'Parked',
    queueCapacity: 5,
    dataStructureId: structure.id,
  });
  await write('PUT', `/webhook/${parked.id}`, { getRequestMethod: true });
  expect((await fetch(`${platform!.url}/hook/${String(parked.key)}?n=1`)).status).toBe(200);
  const hook = await create('/webhook', { name: 'Orders' });
  await create('/scenario', {
    name: 'Order to record',
    webhookId: hook.id,
    steps: [
      { kind: 'createRecord', moduleId: contacts.id, name: { expr: 'n' } },
      { kind: 'webhookResponse', status: 201, body: { expr: '{"n": n}' } },
    ],
  });
  expect((await fetch(`${platform!.url}/hook/${String(hook.key)}?n=Hooked`)).status).toBe(201);
  await parkOneRun();

  // AI configurations, a verdict changed by hand, and the token balance.
  const summary = await create('/field', { moduleId: projects.id, name: 'Summary', type: 'text' });
  const transform = await create('/ai/column-data-transform', {
    name: 'Summary',
    moduleId: projects.id,
    fieldId: summary.id,
    prompt: 'Summarise {{name}}',
  });
  await write('PUT', `/ai/column-data-transform/${transform.id}`, { format: 'three words' });
  const check = await create('/ai/column-data-validation', {
    name: 'Budget plausible',
    moduleId: projects.id,
    fieldId: budget.id,
    rule: 'The budget fits {{name}}',
  });
  const verdict = await create('/ai/column-data-validation-result', {
    validationId: check.id,
    recordId: rollout.id,
    valid: false,
  });
  await write('PUT', `/ai/column-data-validation-result/${verdict.id}`, { valid: true, reason: 'Reviewed' });
  await create('/ai/balance/top-up', { tokens: 100_000 });
  await create('/ai/balance/top-up', { tokens: 500, note: 'second' });
  await create(`/column-data-transform/${transform.id}/execute`, { ids: [rollout.id, ana.id] });
  await create(`/ai/column-data-validation/${check.id}/execute`, { ids: [rollout.id] });
  await create(`/column-data-transform/${transform.id}/preview`, {
    prompt: 'Summarise {{name}}',
    preview: {},
  });

  // Subscriptions: one changed, disabled and rotated; one deleted.
  const subscription = await create('/subscription', {
    name: 'Rollouts',
    url: 'https://receiver.example/hooks',
    events: ['record.created', 'record.updated'],
    filter: `moduleId=${projects.id};budget>10`,
    headers: { 'X-Team': 'sales' },
  });
  await write('PUT', `/subscription/${subscription.id}`, { events: ['record.updated'], active: false });
  await write('POST', `/subscription/${subscription.id}/secret`, { overlapMinutes: 30 });
  const doomedSubscription = await create('/subscription', {
    name: 'Old',
    url: 'https://old.example/hooks',
    events: ['space.created'],
  });
  await write('DELETE', `/subscription/${doomedSubscription.id}`);
}

/**
 * A request parked in its system's run backlog (the platform runs one run of a system at once and holds two in
 * hand): three runs of a scenario whose call waits, the third parked, then all three let go.
 */
async function parkOneRun(): Promise<void> {
  const slow = await startHeldServer();
  try {
    const busy = await create('/webhook', { name: 'Busy' });
    const scenario = await create('/scenario', {
      name: 'Slow call',
      webhookId: busy.id,
      steps: [{ kind: 'httpRequest', url: slow.url }],
    });
    for (let n = 0; n < 3; n++)
      expect((await fetch(`${platform!.url}/hook/${String(busy.key)}?n=${n}`)).status).toBe(200);
    const metrics = await eventually(
      async () => (await fetch(`${platform!.url}/metrics`)).text(),
      (text) => /^integrator_runs_parked 1$/m.test(text),
    );
    expect(metrics).toMatch(/^integrator_runs_parked 1$/m);
    slow.release({ body: '{}' });
    const runs = await eventually(
      async () =>
        (
          await json<{ items: Array<{ status: string }> }>(
            await platform!.call('GET', `/scenario/${scenario.id}/run`),
          )
        ).items,
      (items) => items.length === 3 && items.every((run) => run.status === 'succeeded'),
    );
    expect(runs.map((run) => run.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  } finally {
    await slow.close();
  }
}

test('rebuilding every read model from position 0 gives the documents the live projections wrote', async () => {
  // Data an older release wrote (ModuleCreated and FieldAdded at schema version 1) is part of the history.
  const events = createSqliteEventStore({ path: join(dataDir, 'events.db') });
  const old = await writeOlderReleaseModule(events, 'test');
  await events.close();
  platform = await startPlatform({
    DATA_DIR: dataDir,
    OUTBOUND_ALLOW_PRIVATE: 'true',
    AI_URL: model.baseUrl,
    AI_API_KEY: 'test-key',
    INTEGRATOR_TENANT_CONCURRENCY: '1',
  });
  await create('/field', { moduleId: old.moduleId, name: 'Score', type: 'number' });
  await write('PUT', `/record/${old.recordId}`, { fields: { score: 3 } });
  await driveEveryResource(`http://localhost:${(hooks.address() as AddressInfo).port}/pressed`);

  await waitForAllProjections(platform);
  await platform.stop();
  platform = undefined;
  const collections = await rebuildProjections(dataDir);

  // Every read model is compared, none is empty (an empty one would compare equal to anything empty).
  expect(collections.map((entry) => entry.collection).sort()).toEqual(Object.values(READ_MODELS).sort());
  for (const { collection, live } of collections)
    expect({ collection, empty: live.length === 0 }).toEqual({ collection, empty: false });
  // Nothing is ignored: every document field comes from the events (their data, metadata, position and
  // revision), none from the clock or the run that projected them.
  for (const { projection, collection, live, rebuilt } of collections)
    expect({ projection, collection, documents: rebuilt }).toEqual({
      projection,
      collection,
      documents: live,
    });

  const modules = collections.find((entry) => entry.collection === READ_MODELS.modules)!.rebuilt;
  expect(modules.map((module) => [module.name, module.kind, module.template])).toEqual(
    expect.arrayContaining([
      ['Old leads', 'custom', null],
      ['Contacts', 'built-in', 'contacts'],
      ['Pipeline', 'built-in', 'deals'],
      ['Projects', 'custom', null],
    ]),
  );
});
