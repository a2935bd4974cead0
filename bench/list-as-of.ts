import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Long, MongoClient } from 'mongodb';
import { randomUUID } from 'node:crypto';
import { parseListQuery } from '../contracts/query/list-params';
import { READ_MODELS, VALIDITY } from '../contracts/read-models';
import { createMongoReadStore } from '../infra/read-store/mongodb';
import { recordFieldCatalogue, type RecordFieldDefinition } from '../languages/filter/record-fields';
import { equals, type StoreFilter } from '../languages/filter/store-query';
import { recordVersionsProjection, validityIndex } from '../projections/read-models/record-versions';
import { fieldValueIndex, recordsProjection } from '../projections/read-models/records';
import { validAt } from '../query-api/records/past';
import { machineConditions, percentile, printFigure, runOnBothStores } from './report';
import {
  apiOf,
  headers,
  startServer,
  waitUntilProjectionsIdle,
  waitUntilVisible,
  type Server,
} from './server';

/**
 * A module's list as of a moment (issue 32): RECORDS records in one module, each written VERSIONS times (a
 * create, then updates that change the fields the lists filter and order on), all through the platform's
 * bulk routes and projections; once every projection has caught up and the platform has restarted (settled),
 * READS lists of 100, one at a time, with a filter on a field and an order on
 * a field: as of a random time (`asOf`), at a random position (`atPosition`), and the present list with the
 * same filter and order as the baseline, interleaved so that the machine's noise falls on all three alike.
 */
const RECORDS = Number(process.env.BENCH_LIST_RECORDS ?? 100_000);
const VERSIONS = Number(process.env.BENCH_LIST_VERSIONS ?? 10);
const READS = Number(process.env.BENCH_LIST_READS ?? 300);
const BATCH = 1000;
const STAGES = ['lead', 'qualified', 'won', 'lost'];
/** How many bulk requests are in flight at once while loading. */
const LOADERS = 4;

/** The values of record `n` (0-based) in its version `version`: each version moves it in both orders. */
function valuesOf(n: number, version: number): { amount: number; stage: string } {
  return { amount: (n * 7919 + version * 30_011) % 100_000, stage: STAGES[(n + version) % STAGES.length]! };
}

interface Page {
  readonly items: { id: number }[];
  readonly meta: { total?: number; totalRelation?: 'eq' | 'gte' };
}

interface Timed {
  readonly ms: number;
  readonly page: Page;
}

async function timedList(url: string, path: string): Promise<Timed> {
  const started = performance.now();
  const response = await fetch(`${url}/api${path}`, { headers });
  const page = (await response.json()) as Page;
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${JSON.stringify(page)}`);
  return { ms, page };
}

/** Runs `count` bulk requests with at most LOADERS in flight; answers the highest position written. */
async function inParallel(count: number, request: (index: number) => Promise<bigint>): Promise<bigint> {
  let next = 0;
  let highest = 0n;
  await Promise.all(
    Array.from({ length: LOADERS }, async () => {
      while (next < count) {
        const position = await request(next++);
        if (position > highest) highest = position;
      }
    }),
  );
  return highest;
}

async function bulk(server: Server, method: 'POST' | 'PUT', items: unknown[]): Promise<bigint> {
  const response = await fetch(`${server.url}/api/record/bulk`, {
    method,
    headers,
    body: JSON.stringify({ items }),
  });
  const answer = (await response.json()) as { items: { id: number }[]; meta?: { failed: number } };
  if (response.status !== 200 || answer.meta?.failed !== 0)
    throw new Error(`bulk ${method} answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  return BigInt(response.headers.get('x-position') ?? '0');
}

interface Loaded {
  readonly moduleId: number;
  readonly firstPosition: bigint;
  readonly lastPosition: bigint;
  readonly firstTime: number;
  readonly lastTime: number;
}

async function load(server: Server): Promise<Loaded> {
  const call = apiOf(server.url);
  const space = await call<{ id: number }>('POST', '/space', { name: 'Past lists' });
  const module = await call<{ id: number }>('POST', '/module', { spaceId: space.id, name: 'Deals' });
  const moduleId = module.id;
  await call('POST', '/field', { moduleId, name: 'Amount', key: 'amount', type: 'number' });
  await call('POST', '/field', {
    moduleId,
    name: 'Stage',
    key: 'stage',
    type: 'select',
    config: { options: STAGES },
  });
  const batches = Math.ceil(RECORDS / BATCH);
  const sizeOf = (batch: number) => Math.min(BATCH, RECORDS - batch * BATCH);
  const ids = new Array<number[]>(batches);
  const started = performance.now();
  const firstTime = Date.now();
  let firstPosition = 0n;
  let lastPosition = await inParallel(batches, async (batch) => {
    const items = Array.from({ length: sizeOf(batch) }, (_, index) => {
      const n = batch * BATCH + index;
      return { moduleId, name: `Deal ${n}`, fields: valuesOf(n, 0) };
    });
    const response = await fetch(`${server.url}/api/record/bulk`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ items }),
    });
    const answer = (await response.json()) as { items: { id: number }[]; meta?: { failed: number } };
    if (response.status !== 200 || answer.meta?.failed !== 0)
      throw new Error(`bulk create answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    ids[batch] = answer.items.map((item) => item.id);
    const position = BigInt(response.headers.get('x-position') ?? '0');
    if (firstPosition === 0n || position < firstPosition) firstPosition = position;
    return position;
  });
  for (let version = 1; version < VERSIONS; version++) {
    const reached = await inParallel(batches, (batch) =>
      bulk(
        server,
        'PUT',
        ids[batch]!.map((id, index) => ({ id, fields: valuesOf(batch * BATCH + index, version) })),
      ),
    );
    if (reached > lastPosition) lastPosition = reached;
    process.stderr.write(
      `  version ${version + 1} of ${VERSIONS} written (${((performance.now() - started) / 1000).toFixed(0)} s)\n`,
    );
  }
  const lastTime = Date.now();
  await waitUntilVisible(server.url, lastPosition);
  process.stderr.write(
    `${RECORDS} records × ${VERSIONS} versions written and projected in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  return { moduleId, firstPosition, lastPosition, firstTime, lastTime };
}

function summary(times: readonly number[]): { p50: number; p99: number } {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/** The two lists: an option (1 in 4) ordered by the number, and a range of the number ordered by it. */
type Shape = 'option' | 'range';
const SHAPES: readonly Shape[] = ['option', 'range'];

interface ListParams {
  readonly filter: string;
  readonly order: string;
  readonly limit: '100';
}

function listParams(shape: Shape, index: number): ListParams {
  if (shape === 'option')
    return { filter: `stage=${STAGES[index % STAGES.length]!}`, order: 'amount;DESC', limit: '100' };
  return { filter: `amount>=${Math.floor(Math.random() * 90_000)}`, order: 'amount;ASC', limit: '100' };
}

/** When a list is read: now, as of a time, at a position. */
type Moment =
  | { readonly kind: 'present' }
  | { readonly kind: 'time'; readonly at: string }
  | { readonly kind: 'position'; readonly position: bigint };
const KINDS = ['present', 'time', 'position'] as const;

/** Reads one list; answers how long it took and the page. */
type Reader = (params: ListParams, moment: Moment) => Promise<Timed>;

function httpReader(server: Server, moduleId: number): Reader {
  return (params, moment) => {
    const query = new URLSearchParams({ ...params });
    if (moment.kind === 'time') query.set('asOf', moment.at);
    if (moment.kind === 'position') query.set('atPosition', String(moment.position));
    return timedList(server.url, `/module/${moduleId}/item?${query.toString()}`);
  };
}

/**
 * Reads of the three kinds interleaved (each round in another order, so that none always follows another),
 * half of each shape, at random moments between the first write and the last; prints p50 and p99 of each
 * kind, the past ones beside the present one's as ratios. `kinds` leaves some out (a store that cannot
 * answer a time).
 */
async function measure(
  store: string,
  loaded: Loaded,
  read: Reader,
  options: {
    readonly kinds?: readonly Moment['kind'][];
    readonly budgetMs?: number;
    readonly note?: string;
    readonly records?: number;
  } = {},
): Promise<void> {
  const { firstPosition, lastPosition, firstTime, lastTime } = loaded;
  const kinds = options.kinds ?? KINDS;
  const momentOf = (kind: Moment['kind']): Moment =>
    kind === 'present'
      ? { kind }
      : kind === 'time'
        ? { kind, at: new Date(firstTime + Math.floor(Math.random() * (lastTime - firstTime))).toISOString() }
        : {
            kind,
            position:
              firstPosition + BigInt(Math.floor(Math.random() * Number(lastPosition - firstPosition + 1n))),
          };

  // The present and the past at the last position list the same records.
  const check = listParams('option', 0);
  const now = await read(check, { kind: 'present' });
  const then = await read(check, { kind: 'position', position: lastPosition });
  const idsOf = (page: Page) => page.items.map((doc) => doc.id).join(',');
  // A past list counts up to PAST_LIST_COUNT_CAP: its total is exact (eq) or the cap, below the present's (gte).
  const { total, totalRelation } = then.page.meta;
  const sameTotal = totalRelation === 'gte' ? total! < now.page.meta.total! : total === now.page.meta.total;
  if (idsOf(now.page) !== idsOf(then.page) || !sameTotal)
    throw new Error('the list at the last position is not the present list');

  const warmUp = options.budgetMs === undefined ? 10 : 0;
  for (let index = 0; index < warmUp; index++)
    for (const kind of kinds) await read(listParams(SHAPES[index % 2]!, index), momentOf(kind));

  const times = new Map<string, number[]>();
  const timesOf = (key: string) => times.get(key) ?? times.set(key, []).get(key)!;
  const totals: number[] = [];
  let untotalled = 0;
  let empty = 0;
  const started = performance.now();
  let rounds = 0;
  for (; rounds < READS; rounds++) {
    if (options.budgetMs !== undefined && performance.now() - started > options.budgetMs) break;
    const shape = SHAPES[rounds % 2]!;
    const params = listParams(shape, Math.floor(rounds / 2));
    for (let turn = 0; turn < kinds.length; turn++) {
      const kind = kinds[(rounds + turn) % kinds.length]!;
      const { ms, page } = await read(params, momentOf(kind));
      timesOf(kind).push(ms);
      timesOf(`${kind} ${shape}`).push(ms);
      if (kind === 'present') continue;
      if (typeof page.meta.total === 'number') totals.push(page.meta.total);
      else untotalled++;
      if (page.items.length === 0) empty++;
    }
  }
  const present = summary(timesOf('present'));
  const byShape = (kind: string) =>
    SHAPES.map((shape) => {
      const { p50, p99 } = summary(timesOf(`${kind} ${shape}`));
      return `${shape} p50 ${p50.toFixed(2)} p99 ${p99.toFixed(2)} ms`;
    }).join(', ');
  printFigure(
    `list_present_p99_${store}`,
    present.p99,
    'ms',
    undefined,
    `the baseline; p50 ${present.p50.toFixed(2)} ms; ${byShape('present')}; ${options.records ?? RECORDS} records × ${VERSIONS} versions in one module, ${rounds} reads of each kind one at a time, half filter stage=<option> order=amount;DESC, half filter amount>=<n> order=amount;ASC, limit 100, with meta.total (past lists count up to PAST_LIST_COUNT_CAP, 10,000)${options.note ? `; ${options.note}` : ''}`,
  );
  for (const [kind, name] of [
    ['time', 'as_of_time'],
    ['position', 'at_position'],
  ] as const) {
    if (!kinds.includes(kind)) continue;
    const past = summary(timesOf(kind));
    printFigure(
      `list_${name}_p99_${store}`,
      past.p99,
      'ms',
      '≤ 50',
      `p50 ${past.p50.toFixed(2)} ms; ${(past.p50 / present.p50).toFixed(1)}× the present list's p50, ${(past.p99 / present.p99).toFixed(1)}× its p99; ${byShape(kind)}`,
    );
  }
  const meanTotal = totals.reduce((sum, total) => sum + total, 0) / Math.max(1, totals.length);
  process.stdout.write(
    `# ${store}: meta.total counted on ${totals.length} of ${totals.length + untotalled} past lists (mean ${meanTotal.toFixed(0)} records); ${empty} came back empty\n`,
  );
}

/**
 * BENCH_LIST_DATA_DIR keeps the platform's data (and what was loaded) in that folder, and a later run with the
 * same folder measures again without loading: for tuning, not for figures of a fresh load.
 */
async function run(store: string, env: Record<string, string>): Promise<void> {
  const keptDir = process.env.BENCH_LIST_DATA_DIR;
  const dataDir = keptDir ?? mkdtempSync(join(tmpdir(), 'bench-list-as-of-'));
  const loadedFile = join(dataDir, `bench-list-as-of-${store}.json`);
  const settings = { SEMANTIC_SEARCH: 'false', ...env };
  let server = await startServer(dataDir, settings);
  try {
    process.stdout.write(`# ${machineConditions()}; platform in its own process, read store ${store}\n`);
    let loaded: Loaded;
    if (existsSync(loadedFile))
      loaded = JSON.parse(readFileSync(loadedFile, 'utf8'), (key, value: unknown) =>
        key.endsWith('Position') ? BigInt(value as string) : value,
      ) as Loaded;
    else {
      loaded = await load(server);
      await waitUntilProjectionsIdle(server.url);
      // Measured on a settled store, as it is once the load is over: right after it the read models' WAL holds
      // the whole load, its checkpoint copies gigabytes, and the disk writes the load's pages back while the
      // reads run (the present list's own p99 was 60–84 ms so). A restart checkpoints the WAL; `sync` waits for
      // the write-back.
      const started = performance.now();
      await server.stop();
      execFileSync('sync');
      server = await startServer(dataDir, settings);
      process.stderr.write(
        `restarted after the load's WAL was checkpointed and written back, in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
      );
    }
    if (keptDir)
      writeFileSync(
        loadedFile,
        JSON.stringify(loaded, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)),
      );
    await waitUntilProjectionsIdle(server.url);
    await measure(store, loaded, httpReader(server, loaded.moduleId));
  } finally {
    await server.stop();
    if (!keptDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Records for the MongoDB read store (FerretDB 1.x scans for these lists: a smaller size keeps it finite). */
const MONGO_RECORDS = Number(process.env.BENCH_LIST_MONGO_RECORDS ?? RECORDS);
/** How long the MongoDB reads may take in all. */
const MONGO_BUDGET_MS = Number(process.env.BENCH_LIST_MONGO_BUDGET_MS ?? 120_000);

/**
 * The MongoDB read store, read as the list route reads it (the same StoreQuery: the catalogue's fields,
 * visibility, the module, the validity at a position, tenant scoping) with the projections' indexes, over
 * version documents written straight into the collections as the record-versions projection would leave them
 * (each record's versions valid from one position to the next; the current one open), and the records
 * collection holding each record's last version. Loading through the platform's projections takes FerretDB
 * 1.x far too long (bench/field-filter.ts says why); what is measured here is the read, without HTTP. A time
 * (`asOf`) is a position found in the event log first (a few dozen single-event reads), so only positions
 * are read here.
 */
async function runMongoReadStore(url: string): Promise<void> {
  const records = MONGO_RECORDS;
  const database = `bench_list_as_of_${randomUUID().slice(0, 8)}`;
  const store = await createMongoReadStore({ url, database, queryBudgetMs: 600_000 });
  const client = new MongoClient(url);
  await client.connect();
  try {
    process.stdout.write(
      `# ${machineConditions()}; MongoDB read store at ${new URL(url).host}, read in this process; ${records} records × ${VERSIONS} versions\n`,
    );
    const tenant = 'bench';
    const moduleId = 1;
    const definitions: RecordFieldDefinition[] = [
      { fieldId: 1, moduleId, key: 'amount', type: 'number', config: {} },
      { fieldId: 2, moduleId, key: 'stage', type: 'select', config: { options: STAGES } },
    ];
    const fieldIndexes = definitions.flatMap((definition) => fieldValueIndex(definition) ?? []);
    const versionsCollection = READ_MODELS.recordVersions;
    const recordsCollection = READ_MODELS.records;
    for (const index of [
      ...(recordVersionsProjection.collections[versionsCollection] ?? []),
      ...fieldIndexes.map(validityIndex),
    ])
      await store.ensureIndex(versionsCollection, index);
    for (const index of [...(recordsProjection.collections[recordsCollection] ?? []), ...fieldIndexes])
      await store.ensureIndex(recordsCollection, index);

    // Version v of record n (0-based) at position v × records + n + 1: every create, then rounds of updates.
    const positionOf = (n: number, version: number) => version * records + n + 1;
    const documentOf = (n: number, version: number) => {
      const at = positionOf(n, version);
      return {
        tenant,
        status: 'live',
        recordId: n + 1,
        moduleId,
        spaceId: 1,
        name: `Deal ${n}`,
        fields: valuesOf(n, version),
        revision: version,
        [VALIDITY.fromPosition]: at,
        ...(version + 1 < VERSIONS && { [VALIDITY.toPosition]: positionOf(n, version + 1) }),
      };
    };
    const loaded = performance.now();
    const versions = client.db(database).collection<{ _id: string }>(versionsCollection);
    const current = client.db(database).collection<{ _id: string }>(recordsCollection);
    for (let version = 0; version < VERSIONS; version++)
      for (let offset = 0; offset < records; offset += BATCH) {
        const ns = Array.from({ length: Math.min(BATCH, records - offset) }, (_, index) => offset + index);
        await versions.insertMany(
          ns.map((n) => ({
            _id: `${tenant}.${n + 1}@${version}`,
            _pos: Long.fromNumber(positionOf(n, version)),
            ...documentOf(n, version),
          })),
        );
        if (version === VERSIONS - 1) {
          const last = (n: number) => {
            const { [VALIDITY.fromPosition]: _from, ...doc } = documentOf(n, version);
            return doc;
          };
          await current.insertMany(
            ns.map((n) => ({
              _id: `${tenant}.${n + 1}`,
              _pos: Long.fromNumber(positionOf(n, version)),
              ...last(n),
            })),
          );
        }
      }
    process.stderr.write(
      `mongodb: ${records * VERSIONS} versions and ${records} records written in ${((performance.now() - loaded) / 1000).toFixed(1)} s\n`,
    );

    const fields = recordFieldCatalogue(definitions);
    const read: Reader = async (params, moment) => {
      const query = parseListQuery(params, fields, { order: [{ path: 'recordId', direction: 'asc' }] });
      const past = moment.kind === 'position' ? validAt(moment.position) : undefined;
      const scope: StoreFilter = past
        ? { kind: 'and', children: [equals('moduleId', moduleId), past] }
        : equals('moduleId', moduleId);
      const filter: StoreFilter = {
        kind: 'and',
        children: [
          equals('tenant', tenant),
          { kind: 'and', children: [equals('status', 'live'), scope, query.filter!] },
        ],
      };
      const started = performance.now();
      const page = await store.find(past ? versionsCollection : recordsCollection, { ...query, filter });
      const ms = performance.now() - started;
      return {
        ms,
        page: { items: page.items.map((doc) => ({ id: Number(doc.recordId) })), meta: { total: page.total } },
      };
    };
    await measure(
      'mongodb',
      {
        moduleId,
        firstPosition: BigInt(positionOf(0, 0)),
        lastPosition: BigInt(positionOf(records - 1, VERSIONS - 1)),
        firstTime: 0,
        lastTime: 0,
      },
      read,
      {
        kinds: ['present', 'position'],
        budgetMs: MONGO_BUDGET_MS,
        records,
        note: `read store only (no HTTP), ${records} records × ${VERSIONS} versions written straight into its collections`,
      },
    );
  } finally {
    await client.db(database).dropDatabase();
    await client.close();
    await store.close();
  }
}

runOnBothStores('list', () => run('sqlite', {}), runMongoReadStore);
