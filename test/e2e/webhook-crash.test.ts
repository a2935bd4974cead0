import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { createTransport } from 'nodemailer';
import { exited, freePort, output, spawnBin, waitUntilReady, tokenApi } from '../support/child-platform';
import { polling } from '../support/eventually';

/**
 * Stopping during webhook traffic. `kill -9` during a flood: every request answered 200 is in its hook's log
 * after the restart, the instant ones ran exactly once (one record each, one run each), the queued ones are all
 * still queued; the same for email to mailhooks (every one answered 250 runs once). SIGTERM during a flood or while a request waits for its run's response: the process answers,
 * exits within seconds, and nothing accepted is lost or run twice.
 */
const TOKEN = 'rpt_hook-crash-token-0123456789abcdef';
jest.setTimeout(180_000);

let dataDir: string;
let child: ChildProcess | undefined;
const children: ChildProcess[] = [];

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'records-hook-crash-'));
});

afterEach(async () => {
  for (const running of children.splice(0))
    if (running.exitCode === null && running.signalCode === null) {
      running.kill('SIGKILL');
      await exited(running);
    }
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

async function startServer(
  port: number,
  script = 'platform.ts',
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<string> {
  child = spawnBin(script, args, {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TOKEN,
    ...env,
  });
  children.push(child);
  const logs = output(child);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(url).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${logs()}`);
  });
  return url;
}

const api = tokenApi(TOKEN);

interface Page<T> {
  items: T[];
  meta: { total: number };
}

/** Every item of a list, page by page. */
async function all<T>(url: string, path: string): Promise<T[]> {
  const items: T[] = [];
  for (let offset = 0; ; offset += 500) {
    const page = await api<Page<T>>(
      url,
      'GET',
      `${path}${path.includes('?') ? '&' : '?'}limit=500&offset=${offset}`,
    );
    items.push(...page.items);
    if (page.items.length < 500) return items;
  }
}

const eventually = polling(60_000, 250);

interface Hook {
  id: number;
  key: string;
  instant: boolean;
  scenarioId?: number;
}

test('kill -9 during a webhook flood: every accepted request is logged, ran once or is still queued', async () => {
  const port = await freePort();
  let url = await startServer(port);
  const space = await api<{ id: number }>(url, 'POST', '/space', { name: 'Hooks' });
  const module = await api<{ id: number }>(url, 'POST', '/module', { spaceId: space.id, name: 'Orders' });
  // Several hooks, as each takes at most 30 requests a second: instant ones with a scenario, queued ones without.
  const hooks: Hook[] = [];
  for (let index = 0; index < 10; index++) {
    const instant = index < 6;
    const hook = await api<{ id: number; key: string }>(url, 'POST', '/webhook', { name: `Hook ${index}` });
    const scenario = instant
      ? await api<{ id: number }>(url, 'POST', '/scenario', {
          name: `Orders ${index}`,
          webhookId: hook.id,
          steps: [{ kind: 'createRecord', moduleId: module.id, name: { expr: 'n' } }],
        })
      : undefined;
    hooks.push({ id: hook.id, key: hook.key, instant, ...(scenario && { scenarioId: scenario.id }) });
  }

  const accepted = new Map<string, Hook>();
  let stop = false;
  const sender = async (worker: number): Promise<void> => {
    for (let i = 0; !stop; i++) {
      const hook = hooks[(worker + i) % hooks.length]!;
      const n = `n-${worker}-${i}`;
      try {
        const response = await fetch(`${url}/hook/${hook.key}?n=${n}`, { method: 'POST' });
        if (response.status === 200 && (await response.text()) === 'Accepted') accepted.set(n, hook);
        else if (response.status === 429) await new Promise((resolve) => setTimeout(resolve, 20));
      } catch {
        return;
      }
    }
  };
  const senders = Array.from({ length: 8 }, (_, worker) => sender(worker));
  const deadline = Date.now() + 30_000;
  while (accepted.size < 200 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  child!.kill('SIGKILL');
  await exited(child!);
  stop = true;
  await Promise.all(senders);
  expect(accepted.size).toBeGreaterThanOrEqual(200);

  url = await startServer(port);
  const instantNames = [...accepted].filter(([, hook]) => hook.instant).map(([n]) => n);
  // The integrator takes up where it was: every accepted instant request gets its record, exactly one.
  const records = await eventually(
    () => all<{ name: string }>(url, `/module/${module.id}/item`),
    (items) => {
      const names = new Set(items.map((item) => item.name));
      return instantNames.every((n) => names.has(n));
    },
  );
  const counts = new Map<string, number>();
  for (const record of records) counts.set(record.name, (counts.get(record.name) ?? 0) + 1);
  for (const n of instantNames) expect({ n, records: counts.get(n) }).toEqual({ n, records: 1 });
  expect([...counts.values()].every((count) => count === 1)).toBe(true);

  for (const hook of hooks) {
    const mine = [...accepted].filter(([, owner]) => owner === hook).map(([n]) => n);
    // Every accepted request is in the log (with its bundle), whatever happened to the process after the answer.
    const logs = await eventually(
      () => all<{ id: string }>(url, `/webhook/${hook.id}/log`),
      (entries) => entries.length >= mine.length,
    );
    const logged = new Set<string>();
    for (const entry of logs) {
      const detail = await api<{ bundle: { n: string } }>(url, 'GET', `/webhook/${hook.id}/log/${entry.id}`);
      logged.add(detail.bundle.n);
    }
    for (const n of mine)
      expect({ hook: hook.id, n, logged: logged.has(n) }).toEqual({ hook: hook.id, n, logged: true });
    if (hook.instant) {
      // One run per logged request, each succeeded.
      const runs = await eventually(
        () => all<{ requestId: string; status: string }>(url, `/scenario/${hook.scenarioId!}/run`),
        (items) => items.length >= logs.length && items.every((run) => run.status === 'succeeded'),
      );
      expect(runs.map((run) => run.status).filter((status) => status !== 'succeeded')).toEqual([]);
      expect(new Set(runs.map((run) => run.requestId)).size).toBe(runs.length);
      expect(runs.length).toBe(logs.length);
    } else {
      // Queued, none lost: the queue holds every logged request.
      const queue = await eventually(
        () => all<{ requestId: string }>(url, `/webhook/${hook.id}/queue`),
        (items) => items.length === logs.length,
      );
      expect(new Set(queue.map((item) => item.requestId))).toEqual(new Set(logs.map((entry) => entry.id)));
    }
  }
});

test('kill -9 during a mail flood: every email answered 250 runs exactly once after the restart', async () => {
  const port = await freePort();
  const smtp = { SMTP_PORT: String(await freePort()), MAIL_DOMAIN: 'crash.example' };
  let url = await startServer(port, 'platform.ts', [], smtp);
  const space = await api<{ id: number }>(url, 'POST', '/space', { name: 'Mail' });
  const module = await api<{ id: number }>(url, 'POST', '/module', { spaceId: space.id, name: 'Messages' });
  const addresses: string[] = [];
  for (let index = 0; index < 10; index++) {
    const hook = await api<{ id: number; address: string }>(url, 'POST', '/webhook', {
      name: `Mail ${index}`,
      kind: 'mail',
    });
    await api(url, 'POST', '/scenario', {
      name: `Mail ${index}`,
      webhookId: hook.id,
      steps: [{ kind: 'createRecord', moduleId: module.id, name: { expr: 'subject' } }],
    });
    addresses.push(hook.address);
  }

  const accepted = new Set<string>();
  let stop = false;
  const transport = createTransport({
    host: '127.0.0.1',
    port: Number(smtp.SMTP_PORT),
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: 8,
  });
  const sender = async (worker: number): Promise<void> => {
    for (let i = 0; !stop; i++) {
      const subject = `m-${worker}-${i}`;
      try {
        await transport.sendMail({
          from: 'a@example.org',
          to: addresses[(worker + i) % addresses.length],
          subject,
          text: 'x',
        });
        accepted.add(subject);
      } catch (error) {
        // 451: over a hook's rate, try another; anything else: the process is gone.
        if ((error as { responseCode?: number }).responseCode !== 451) return;
      }
    }
  };
  const senders = Array.from({ length: 8 }, (_, worker) => sender(worker));
  const deadline = Date.now() + 30_000;
  while (accepted.size < 150 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  child!.kill('SIGKILL');
  await exited(child!);
  stop = true;
  await Promise.all(senders);
  transport.close();
  expect(accepted.size).toBeGreaterThanOrEqual(150);

  url = await startServer(port, 'platform.ts', [], smtp);
  const records = await eventually(
    () => all<{ name: string }>(url, `/module/${module.id}/item`),
    (items) => {
      const names = new Set(items.map((item) => item.name));
      return [...accepted].every((subject) => names.has(subject));
    },
  );
  const counts = new Map<string, number>();
  for (const record of records) counts.set(record.name, (counts.get(record.name) ?? 0) + 1);
  for (const subject of accepted)
    expect({ subject, records: counts.get(subject) }).toEqual({ subject, records: 1 });
  expect([...counts.values()].every((count) => count === 1)).toBe(true);
});

test('SIGTERM during a webhook flood: the process exits promptly, and every accepted request runs exactly once', async () => {
  const port = await freePort();
  let url = await startServer(port);
  // Many hooks with a quick scenario, so the integrator works through pages of runs that each end at once.
  const hooks: Hook[] = [];
  for (let index = 0; index < 100; index++) {
    const hook = await api<{ id: number; key: string }>(url, 'POST', '/webhook', { name: `Hook ${index}` });
    const scenario = await api<{ id: number }>(url, 'POST', '/scenario', {
      name: `Double ${index}`,
      webhookId: hook.id,
      steps: [{ kind: 'setVariable', name: 'double', value: { expr: '$number(n) * 2' } }],
    });
    hooks.push({ id: hook.id, key: hook.key, instant: true, scenarioId: scenario.id });
  }
  const accepted = new Map<number, number>();
  let stop = false;
  const sender = async (worker: number): Promise<void> => {
    for (let i = 0; !stop; i++) {
      const hook = hooks[Math.floor(Math.random() * hooks.length)]!;
      try {
        const response = await fetch(`${url}/hook/${hook.key}?n=${worker * 1_000_000 + i}`);
        if (response.status === 200 && (await response.text()) === 'Accepted')
          accepted.set(hook.id, (accepted.get(hook.id) ?? 0) + 1);
      } catch {
        return;
      }
    }
  };
  const senders = Array.from({ length: 16 }, (_, worker) => sender(worker));
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const signalled = Date.now();
  child!.kill('SIGTERM');
  const code = await Promise.race([
    exited(child!),
    new Promise<string>((resolve) => setTimeout(() => resolve('still running after 15 s'), 15_000)),
  ]);
  const exitedAfter = Date.now() - signalled;
  stop = true;
  await Promise.all(senders);
  const total = [...accepted.values()].reduce((sum, count) => sum + count, 0);
  expect(total).toBeGreaterThan(500);
  expect({ code, exitedPromptly: exitedAfter < 10_000 }).toEqual({ code: 0, exitedPromptly: true });

  // Whatever the stop left unrun is taken up after the restart; nothing runs twice. (A request the client saw
  // fail as the process stopped may still have been logged: the log is the measure, the answers its minimum.)
  url = await startServer(port);
  for (const hook of hooks) {
    const logged = (await all<{ id: string }>(url, `/webhook/${hook.id}/log`)).map((entry) => entry.id);
    const runs = await eventually(
      () => all<{ requestId: string; status: string }>(url, `/scenario/${hook.scenarioId!}/run`),
      (items) => items.length >= logged.length && items.every((run) => run.status === 'succeeded'),
    );
    expect({
      hook: hook.id,
      loggedAtLeastAccepted: logged.length >= (accepted.get(hook.id) ?? 0),
      runsOfLoggedRequests: new Set(runs.map((run) => run.requestId)),
      runs: runs.length,
    }).toEqual({
      hook: hook.id,
      loggedAtLeastAccepted: true,
      runsOfLoggedRequests: new Set(logged),
      runs: logged.length,
    });
  }
});

test('SIGTERM while a request waits for its run: it is answered Accepted at once, and the process exits promptly', async () => {
  // The command API and the projections without an integrator: the run of the request never comes.
  await startServer(await freePort(), 'service.ts', ['projections']);
  const url = await startServer(await freePort(), 'service.ts', ['command-api']);
  const commandApi = child!;
  const hook = await api<{ id: number; key: string }>(url, 'POST', '/webhook', { name: 'Waits' });
  await api(url, 'POST', '/scenario', {
    name: 'Answers',
    webhookId: hook.id,
    steps: [{ kind: 'webhookResponse', status: 201, body: 'done' }],
  });
  const answer = fetch(`${url}/hook/${hook.key}`).then(async (response) => ({
    status: response.status,
    body: await response.text(),
    at: Date.now(),
  }));
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const signalled = Date.now();
  commandApi.kill('SIGTERM');
  const answered = await answer;
  const code = await Promise.race([
    exited(commandApi),
    new Promise<string>((resolve) => setTimeout(() => resolve('still running after 15 s'), 15_000)),
  ]);
  expect({
    status: answered.status,
    body: answered.body,
    answeredWithinASecond: answered.at - signalled < 1_000,
    code,
    exitedWithinTwoSeconds: Date.now() - signalled < 2_000,
  }).toEqual({
    status: 200,
    body: 'Accepted',
    answeredWithinASecond: true,
    code: 0,
    exitedWithinTwoSeconds: true,
  });
});
