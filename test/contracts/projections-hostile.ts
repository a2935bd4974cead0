import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AI_EVENTS } from '../../contracts/events/ai';
import { CATALOGUE_EVENTS } from '../../contracts/events/catalogues';
import type { EventDefinition } from '../../contracts/events/definition';
import type { NewEvent } from '../../contracts/events/envelope';
import { FILE_EVENTS } from '../../contracts/events/files';
import { IDENTITY_EVENTS } from '../../contracts/events/identity';
import { INTEGRATOR_EVENTS } from '../../contracts/events/integrator';
import { OAUTH_EVENTS } from '../../contracts/events/oauth';
import { RECORDS_EVENTS } from '../../contracts/events/records';
import { SYSTEM_EVENTS } from '../../contracts/events/system';
import { TENANT_EVENTS } from '../../contracts/events/tenants';
import { streamName } from '../../contracts/streams';
import { createSqliteEventStore } from '../../infra/event-store/sqlite';
import { createLogger } from '../../infra/logging';
import type { ReadStore } from '../../infra/read-store/port';
import { DEAD_LETTERS_COLLECTION, type DeadLetter } from '../../projections/dead-letters';
import { READ_MODEL_PROJECTIONS } from '../../projections/read-models/catalogue';
import { ProjectionRunner } from '../../projections/runner';
import { newEvent } from './event-store';
import { nestedJson, validSamples } from '../support/hostile-data';
import type { ReadStoreUnderTest } from './read-store';

/** Every event type the platform writes, with its data schema (contracts/events/registry.ts). */
const EVENT_DEFINITIONS: readonly EventDefinition[] = [
  ...SYSTEM_EVENTS,
  ...IDENTITY_EVENTS,
  ...RECORDS_EVENTS,
  ...FILE_EVENTS,
  ...CATALOGUE_EVENTS,
  ...TENANT_EVENTS,
  ...OAUTH_EVENTS,
  ...INTEGRATOR_EVENTS,
  ...AI_EVENTS,
];

const SAMPLES_PER_TYPE = 3;
const TENANTS = ['test', 'acme'];
/** Few stream ids, so that later events change documents earlier ones made. */
const STREAM_IDS = 4;

/**
 * Where an event schema is laxer than what its deciders write: what they write. A record's changes name
 * `name` or `fields.<key>` (command-api/records/domain/record.ts), keys as fieldKeySchema allows; an event naming
 * another path is no event of this platform (its projection records it as a dead letter, it does not stop).
 */
const AS_DECIDERS_WRITE: Readonly<Record<string, (data: unknown) => unknown>> = {
  RecordUpdated: (data) => {
    const { changes, ...rest } = data as { changes: Array<{ field: string }> };
    return {
      ...rest,
      // One change per field, as the decider makes them.
      changes: changes.map((change, index) => ({
        ...change,
        field:
          index === 0 ? 'name' : `fields.${change.field.replace(/[^A-Za-z0-9_]/g, '').slice(0, 56)}_${index}`,
      })),
    };
  },
};

interface Planned {
  readonly event: NewEvent;
  readonly stream: string;
  /** Valid for its schema: it must be applied, never a dead letter. */
  readonly valid: boolean;
}

/**
 * Every event type in its real shape (its schema), with hostile data wherever the schema leaves it free
 * (test/support/hostile-data.ts), in the projection's categories; and some no store can hold or no release
 * writes (nested past the read store's 100 levels, data null).
 */
function plannedEvents(categories: readonly string[], seed: number): Planned[] {
  const planned: Planned[] = [];
  let n = 0;
  const next = (type: string, data: unknown, valid: boolean): void => {
    const tenant = TENANTS[n % TENANTS.length]!;
    const stream = streamName(categories[n % categories.length]!, tenant, (n % STREAM_IDS) + 1);
    const event = newEvent(type, data);
    planned.push({ event: { ...event, metadata: { ...event.metadata, tenant } }, stream, valid });
    n++;
  };
  for (const [index, definition] of EVENT_DEFINITIONS.entries()) {
    const asWritten = AS_DECIDERS_WRITE[definition.type] ?? ((data: unknown) => data);
    for (const data of validSamples(definition.schema, SAMPLES_PER_TYPE, seed + index))
      next(definition.type, asWritten(data), true);
    if (index % 10 === 0) {
      next(definition.type, nestedJson(120), false);
      next(definition.type, null, false);
    }
  }
  return planned;
}

/**
 * Every projection the platform runs, fed every event type with hostile payloads, never stops: it reaches
 * the head of the log, with no error, having applied every valid event; what it could not apply is a
 * dead letter, never a stop.
 */
export function hostileProjectionsContract(factory: () => Promise<ReadStoreUnderTest>): void {
  let subject: ReadStoreUnderTest | undefined;
  let dir: string;
  const seed = Number(process.env.FC_SEED ?? Date.now() % 1_000_000);

  beforeAll(async () => {
    subject = await factory();
    dir = mkdtempSync(join(tmpdir(), 'hostile-projections-'));
  });
  afterAll(async () => {
    await subject?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const store = (): ReadStore => {
    if (!subject) throw new Error('the store under test was not created');
    return subject.store;
  };

  test.each(READ_MODEL_PROJECTIONS.map((projection) => [projection.name, projection] as const))(
    'projection %s keeps going through hostile events',
    async (name, projection) => {
      const events = createSqliteEventStore({ path: join(dir, `${name}.db`), pollIntervalMs: 10 });
      const runner = new ProjectionRunner(projection, 1, {
        events,
        readStore: store(),
        logger: createLogger('silent'),
      });
      try {
        const planned = plannedEvents(projection.categories, seed);
        const validPositions = new Set<string>();
        for (const { event, stream, valid } of planned) {
          const { position } = await events.append(stream, [event]);
          if (valid) validPositions.add(position.toString());
        }
        const head = await events.headPosition();
        await runner.start();
        const deadline = Date.now() + 60_000;
        while (runner.position < head && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 20));

        const context = `seed ${seed} (FC_SEED=${seed} repeats it)`;
        expect({ position: runner.position, error: runner.error, context }).toEqual({
          position: head,
          error: undefined,
          context,
        });
        const { items } = await store().find(DEAD_LETTERS_COLLECTION, {
          filter: { kind: 'compare', path: 'projection', op: 'eq', value: name },
        });
        const validOnes = (items as unknown as DeadLetter[]).filter((letter) =>
          validPositions.has(letter.position),
        );
        expect({ deadLettersOfValidEvents: validOnes, context }).toEqual({
          deadLettersOfValidEvents: [],
          context,
        });
        expect(runner.deadLettered).toBe(items.length);
        expect(Object.prototype).not.toHaveProperty('polluted');
      } finally {
        await runner.stop();
        await events.close();
      }
    },
    // FerretDB on SQLite writes large documents slowly: the audit projection keeps every event's data.
    90_000,
  );
}
