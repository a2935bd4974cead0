import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, freePort, startPlatformProcess } from '../support/child-platform';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';

/**
 * `kill -9` in the middle of an execute job: after the restart the job goes on from the outcomes it kept and
 * finishes; every record is rewritten once, and a record whose answer came before the crash is not paid again.
 */
const TOKEN = 'rpt_ai-crash-token-0123456789abcdef';
const RECORDS = 60;
jest.setTimeout(180_000);

let dataDir: string;
let child: ChildProcess | undefined;
let fake: FakeOpenAi;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'records-ai-crash-'));
  fake = await startFakeOpenAi();
  fake.chatReply = (request) =>
    JSON.stringify({ value: `summary of ${request.messages.at(-1)!.content}`.slice(0, 100) });
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await exited(child);
  }
  await fake.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startServer(port: number): Promise<string> {
  let url: string;
  ({ child, url } = await startPlatformProcess(port, {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TOKEN,
    AI_URL: fake.baseUrl,
    AI_API_KEY: 'test-key',
    AI_CONCURRENCY: '3',
    AI_EXECUTE_WAIT_MS: '0',
  }));
  return url;
}

async function call<T = Record<string, unknown>>(url: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}/api${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${TOKEN}`,
      ...(body !== undefined && { 'Content-Type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as T };
}

test('kill -9 during an execute: the job resumes after the restart, every record rewritten once', async () => {
  const port = await freePort();
  let url = await startServer(port);
  const space = (await call<{ id: number }>(url, 'POST', '/space', { name: 'Crash' })).body;
  const module = (await call<{ id: number }>(url, 'POST', '/module', { spaceId: space.id, name: 'Notes' }))
    .body;
  const field = (
    await call<{ id: number; key: string }>(url, 'POST', '/field', {
      moduleId: module.id,
      name: 'Summary',
      type: 'text',
    })
  ).body;
  const ids: number[] = [];
  for (let index = 0; index < RECORDS; index++)
    ids.push(
      (await call<{ id: number }>(url, 'POST', '/record', { moduleId: module.id, name: `Note ${index}` }))
        .body.id,
    );
  const transform = (
    await call<{ id: number }>(url, 'POST', '/ai/column-data-transform', {
      name: 'Summarise',
      moduleId: module.id,
      fieldId: field.id,
      prompt: 'note {{name}}',
    })
  ).body;
  await call(url, 'POST', '/ai/balance/top-up', { tokens: 1_000_000 });

  fake.chatDelayMs = 40;
  const started = await call<{ jobId: number }>(
    url,
    'POST',
    `/column-data-transform/${transform.id}/execute`,
    { ids },
  );
  expect(started.status).toBe(202);
  const jobId = started.body.jobId;
  // Let part of the job happen, then kill the process without warning.
  for (let attempt = 0; attempt < 200 && fake.chatRequests.length < RECORDS / 3; attempt++)
    await new Promise((resolve) => setTimeout(resolve, 20));
  child!.kill('SIGKILL');
  await exited(child!);
  const askedBeforeCrash = new Set(fake.chatRequests.map((request) => request.messages.at(-1)!.content));
  expect(askedBeforeCrash.size).toBeLessThan(RECORDS);

  url = await startServer(port);
  let job: Record<string, unknown> = {};
  for (let attempt = 0; attempt < 300 && job.status !== 'finished'; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    job = (await call(url, 'GET', `/ai/job/${jobId}`)).body;
  }
  expect(job).toMatchObject({ status: 'finished', total: RECORDS, failed: 0 });
  expect(Number(job.done) + Number(job.unchanged)).toBe(RECORDS);

  // Every record has its summary, written once (one RecordUpdated each, by the transform).
  for (const id of ids) {
    const record = (
      await call<{ name: string; fields: Record<string, unknown> }>(url, 'GET', `/record/${id}`)
    ).body;
    expect(record.fields[field.key]).toBe(`summary of note ${record.name}`);
  }
  const updates = (
    await call<{ items: Array<{ streamId: string; credentialId: string }>; meta: { total: number } }>(
      url,
      'GET',
      `/audit?filter=type=RecordUpdated&limit=500`,
    )
  ).body;
  const perRecord = new Map<string, number>();
  for (const entry of updates.items) {
    expect(entry.credentialId).toBe(`transform:${transform.id}`);
    perRecord.set(entry.streamId, (perRecord.get(entry.streamId) ?? 0) + 1);
  }
  expect(perRecord.size).toBe(RECORDS);
  expect([...perRecord.values()].every((count) => count === 1)).toBe(true);

  // Asked at most once more than there are records: only calls cut by the crash (AI_CONCURRENCY of them at
  // most) are asked again; a record whose answer came before the crash is answered from it.
  const asked = fake.chatRequests.map((request) => request.messages.at(-1)!.content);
  expect(new Set(asked).size).toBe(RECORDS);
  expect(asked.length - RECORDS).toBeLessThanOrEqual(3);

  // Every token spent belongs to an outcome: what the outcomes show is what the balance spent, and what the
  // killed process had reserved for the job is let go when the job finishes.
  const outcomes = (
    await call<{ items: Array<{ tokens: number }> }>(url, 'GET', `/ai/job/${jobId}/item?limit=500`)
  ).body.items;
  const shown = outcomes.reduce((sum, item) => sum + item.tokens, 0);
  const balance = (await call<{ spent: number; tokens: number; reserved: number }>(url, 'GET', '/ai/balance'))
    .body;
  expect(job.tokens).toBe(shown);
  expect(balance).toMatchObject({ spent: shown, tokens: 1_000_000 - shown, reserved: 0 });
  expect(shown).toBeGreaterThan(0);
  const items = (await call<{ meta: { total: number } }>(url, 'GET', `/ai/job/${jobId}/item?limit=1`)).body;
  expect(items.meta.total).toBe(RECORDS);
});
