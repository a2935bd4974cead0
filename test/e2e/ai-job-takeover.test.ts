import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, startServiceProcess } from '../support/child-platform';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai';

/**
 * Two command-api processes: while the one running an execute job lives, the other leaves the job alone (its
 * lease holds); once it is killed, the other takes the job over when the lease runs out and finishes it —
 * every record asked once, but for the calls the kill cut.
 */
const TOKEN = 'rpt_ai-takeover-token-0123456789abcdef';
const RECORDS = 40;
const LEASE_MS = 2000;
jest.setTimeout(180_000);

let dataDir: string;
let fake: FakeOpenAi;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'records-ai-takeover-'));
  fake = await startFakeOpenAi();
  fake.chatReply = (request) => JSON.stringify({ value: `done: ${request.messages.at(-1)!.content}` });
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all(children.map((child) => (child.exitCode === null ? exited(child) : undefined)));
  await fake.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const env = () => ({
  DATA_DIR: dataDir,
  ADMIN_TOKEN: TOKEN,
  AI_URL: fake.baseUrl,
  AI_API_KEY: 'test-key',
  AI_CONCURRENCY: '2',
  AI_EXECUTE_WAIT_MS: '0',
  AI_JOB_LEASE_MS: String(LEASE_MS),
});

async function call<T = Record<string, unknown>>(url: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}/api${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${TOKEN}`,
      ...(body !== undefined && { 'Content-Type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

const asked = () => fake.chatRequests.map((request) => request.messages.at(-1)!.content);

test('a job of a killed process is taken over by the other once its lease runs out, and finished', async () => {
  const first = await startServiceProcess('command-api', env(), children);
  const firstProcess = children.at(-1)!;
  const second = await startServiceProcess('command-api', env(), children);
  await startServiceProcess('projections', env(), children);
  const queries = await startServiceProcess('query-api', env(), children);

  const space = (await call<{ id: number }>(first, 'POST', '/space', { name: 'S' })).body;
  const module = (await call<{ id: number }>(first, 'POST', '/module', { spaceId: space.id, name: 'M' }))
    .body;
  const field = (
    await call<{ id: number; key: string }>(first, 'POST', '/field', {
      moduleId: module.id,
      name: 'Out',
      type: 'text',
    })
  ).body;
  // Another command-api process finds the field at once (it waits for the read model before a "not found").
  expect((await call(second, 'PUT', `/field/${field.id}`, { name: 'Output' })).status).toBe(200);
  expect((await call(second, 'PUT', '/field/999999', { name: 'Nothing' })).status).toBe(404);
  const ids: number[] = [];
  for (let index = 0; index < RECORDS; index++)
    ids.push(
      (await call<{ id: number }>(first, 'POST', '/record', { moduleId: module.id, name: `N${index}` })).body
        .id,
    );
  const transform = (
    await call<{ id: number }>(first, 'POST', '/ai/column-data-transform', {
      name: 'T',
      moduleId: module.id,
      fieldId: field.id,
      prompt: 'note {{name}}',
    })
  ).body;
  await call(first, 'POST', '/ai/balance/top-up', { tokens: 1_000_000 });

  fake.chatDelayMs = 250;
  const started = await call<{ jobId: number }>(
    first,
    'POST',
    `/column-data-transform/${transform.id}/execute`,
    {
      ids,
    },
  );
  expect(started.status).toBe(202);

  // Longer than a lease: the second process sees the job and leaves it, since the first renews its lease.
  await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 1.5));
  expect(new Set(asked()).size).toBe(asked().length);
  expect(asked().length).toBeLessThan(RECORDS);

  firstProcess.kill('SIGKILL');
  await exited(firstProcess);
  const askedBeforeKill = asked().length;

  let job: Record<string, unknown> = {};
  for (let attempt = 0; attempt < 300 && job.status !== 'finished'; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const read = await call(queries, 'GET', `/ai/job/${started.body.jobId}`);
    if (read.status === 200) job = read.body;
  }
  expect(job).toMatchObject({ status: 'finished', total: RECORDS, failed: 0 });
  expect(asked().length).toBeGreaterThan(askedBeforeKill);
  // Every record asked; again only those the kill cut (at most AI_CONCURRENCY).
  expect(new Set(asked()).size).toBe(RECORDS);
  expect(asked().length - RECORDS).toBeLessThanOrEqual(2);
  // The job's read model and the records' are projections of their own: the last value may be projected a
  // moment after the job shows finished.
  let record: { fields: Record<string, unknown> } = { fields: {} };
  for (let attempt = 0; attempt < 100 && record.fields[field.key] === undefined; attempt++) {
    record = (await call<{ fields: Record<string, unknown> }>(queries, 'GET', `/record/${ids.at(-1)}`)).body;
    if (record.fields[field.key] === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(record.fields[field.key]).toBe(`done: note N${RECORDS - 1}`);
});
