import { spaceDecider, type SpaceCommand, type SpaceState } from '../../command-api/structure/domain/space';
import {
  AggregateCache,
  CommandHandler,
  loadingEachStreamOnce,
  type CommandContext,
  type CommandOutcome,
} from '../../command-api/kit/handler';
import { IdAllocator } from '../../command-api/kit/id-allocator';
import { IdempotencyKeys, requestHash } from '../../command-api/kit/idempotency';
import type { NewEvent, RecordedEvent } from '../../contracts/events/envelope';
import type { IdBlockReservedData, IdempotencyKeyClaimedData } from '../../contracts/events/system';
import { PlatformError, type ErrorKind } from '../../contracts/errors';
import { childId, eventIdFor, newId } from '../../contracts/ids';
import { streamName } from '../../contracts/streams';
import type {
  AppendOptions,
  AppendResult,
  ReadStreamOptions,
  StreamAppend,
  StreamAppendOutcome,
} from '../../infra/event-store/port';
import { MemoryEventStore } from '../support/memory-event-store';

const TENANT = 'acme';
const SPACE_STREAM = streamName('space', TENANT, 7);
const CREATE_SPACE: SpaceCommand = { kind: 'CreateSpace', spaceId: 7, name: 'Sales', description: null };

function commandContext(commandId: string = newId()): CommandContext {
  return {
    tenant: TENANT,
    actor: { userId: 'user-1', credentialId: 'token-1' },
    commandId,
    correlationId: 'correlation-1',
    causationId: 'request-1',
  };
}

/** An event another writer appends, bypassing the handler under test. */
function concurrentRename(name: string): NewEvent {
  const commandId = newId();
  return {
    id: eventIdFor(TENANT, commandId, 0),
    type: 'SpaceUpdated',
    schemaVersion: 1,
    data: { spaceId: 7, name },
    metadata: { ...commandContext(commandId), occurredAt: new Date().toISOString() },
  };
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

async function streamEvents(store: MemoryEventStore, streamId: string): Promise<RecordedEvent[]> {
  return collect(store.readStream(streamId));
}

async function expectRefusal(promise: Promise<unknown>, kind: ErrorKind): Promise<PlatformError> {
  const error: unknown = await promise.then(
    (value) => new Error(`expected a ${kind} refusal, got ${String(value)}`),
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(PlatformError);
  expect((error as PlatformError).kind).toBe(kind);
  return error as PlatformError;
}

/**
 * Lets another writer append to one stream right before each of the next `racesToInject` appends to it,
 * and counts the appends the code under test attempts on that stream.
 */
class RacingEventStore extends MemoryEventStore {
  racesToInject = 0;
  attemptedAppends = 0;

  constructor(
    private readonly racedStream: string,
    private readonly concurrentEvent: () => NewEvent,
  ) {
    super();
  }

  override async append(
    streamId: string,
    events: readonly NewEvent[],
    options?: AppendOptions,
  ): Promise<AppendResult> {
    if (streamId === this.racedStream) {
      this.attemptedAppends++;
      if (this.racesToInject > 0) {
        this.racesToInject--;
        await super.append(streamId, [this.concurrentEvent()]);
      }
    }
    return super.append(streamId, events, options);
  }
}

/** Remembers how each stream was read, and runs a hook once, right after the next read of a stream ends. */
class ObservedEventStore extends MemoryEventStore {
  readonly reads: { streamId: string; options: ReadStreamOptions }[] = [];
  afterNextRead: (() => Promise<void>) | undefined;

  override async *readStream(
    streamId: string,
    options: ReadStreamOptions = {},
  ): AsyncIterable<RecordedEvent> {
    this.reads.push({ streamId, options });
    yield* super.readStream(streamId, options);
    const hook = this.afterNextRead;
    this.afterNextRead = undefined;
    if (hook) await hook();
  }
}

describe('CommandHandler', () => {
  describe('handle', () => {
    test('appends the decided events in an envelope and answers the new state, revision and position', async () => {
      const store = new MemoryEventStore();
      const context = commandContext();
      const result = await new CommandHandler(store).handle(
        SPACE_STREAM,
        spaceDecider,
        CREATE_SPACE,
        context,
      );

      expect(result).toEqual({
        state: { status: 'active', spaceId: 7, name: 'Sales', description: null },
        revision: 0n,
        position: 1n,
        replayed: false,
      });
      const [stored, ...more] = await streamEvents(store, SPACE_STREAM);
      expect(more).toEqual([]);
      expect(stored).toMatchObject({
        id: eventIdFor(TENANT, context.commandId, 0),
        type: 'SpaceCreated',
        schemaVersion: 1,
        data: { spaceId: 7, name: 'Sales', description: null },
        metadata: {
          tenant: TENANT,
          actor: { userId: 'user-1', credentialId: 'token-1' },
          commandId: context.commandId,
          correlationId: 'correlation-1',
          causationId: 'request-1',
        },
        revision: 0n,
      });
      expect(Number.isNaN(Date.parse(stored!.metadata.occurredAt))).toBe(false);
    });

    test('a command that changes nothing appends nothing and reports no position', async () => {
      const store = new MemoryEventStore();
      const handler = new CommandHandler(store);
      await handler.handle(SPACE_STREAM, spaceDecider, CREATE_SPACE, commandContext());

      const result = await handler.handle(
        SPACE_STREAM,
        spaceDecider,
        { kind: 'UpdateSpace', name: 'Sales' },
        commandContext(),
      );

      expect(result).toMatchObject({
        revision: 0n,
        position: undefined,
        replayed: false,
        state: { name: 'Sales' },
      });
      expect(await store.headPosition()).toBe(1n);
    });

    test('a refused command appends nothing', async () => {
      const store = new MemoryEventStore();
      await expectRefusal(
        new CommandHandler(store).handle(
          SPACE_STREAM,
          spaceDecider,
          { kind: 'DeleteSpace', modules: 0 },
          commandContext(),
        ),
        'not_found',
      );
      expect(await store.headPosition()).toBe(0n);
    });

    test('refuses to append an event that fails its schema', async () => {
      const store = new MemoryEventStore();
      const invalid: SpaceCommand = { kind: 'CreateSpace', spaceId: 0, name: 'Zero', description: null };
      const error = await expectRefusal(
        new CommandHandler(store).handle(
          streamName('space', TENANT, 0),
          spaceDecider,
          invalid,
          commandContext(),
        ),
        'internal',
      );
      expect(error.message).toMatch(/SpaceCreated failed its schema/);
      expect(await store.headPosition()).toBe(0n);
    });
  });

  describe('concurrency', () => {
    async function racingStoreWithSpace(): Promise<RacingEventStore> {
      const store = new RacingEventStore(SPACE_STREAM, () => concurrentRename('Revenue'));
      await new CommandHandler(store).handle(SPACE_STREAM, spaceDecider, CREATE_SPACE, commandContext());
      store.attemptedAppends = 0;
      return store;
    }

    test('on a concurrent append, re-reads the stream, decides again and succeeds', async () => {
      const store = await racingStoreWithSpace();
      store.racesToInject = 1;

      const result = await new CommandHandler(store).handle(
        SPACE_STREAM,
        spaceDecider,
        { kind: 'UpdateSpace', description: 'Deals' },
        commandContext(),
      );

      expect(store.attemptedAppends).toBe(2);
      expect(result).toMatchObject({
        revision: 2n,
        position: 3n,
        state: { name: 'Revenue', description: 'Deals' },
      });
      expect((await streamEvents(store, SPACE_STREAM)).map((event) => event.data)).toEqual([
        { spaceId: 7, name: 'Sales', description: null },
        { spaceId: 7, name: 'Revenue' },
        { spaceId: 7, description: 'Deals' },
      ]);
    });

    test('the retry decides on the fresh state: the same concurrent change turns the command into a no-op', async () => {
      const store = await racingStoreWithSpace();
      store.racesToInject = 1;

      const result = await new CommandHandler(store).handle(
        SPACE_STREAM,
        spaceDecider,
        { kind: 'UpdateSpace', name: 'Revenue' },
        commandContext(),
      );

      expect(result).toMatchObject({ revision: 1n, position: undefined, state: { name: 'Revenue' } });
      expect(await streamEvents(store, SPACE_STREAM)).toHaveLength(2);
    });

    test('gives up after maxAttempts with a conflict and appends none of its events', async () => {
      const store = await racingStoreWithSpace();
      store.racesToInject = Number.POSITIVE_INFINITY;
      const context = commandContext();

      await expectRefusal(
        new CommandHandler(store).handle(
          SPACE_STREAM,
          spaceDecider,
          { kind: 'UpdateSpace', description: 'Deals' },
          context,
          {
            maxAttempts: 3,
          },
        ),
        'conflict',
      );

      expect(store.attemptedAppends).toBe(3);
      const events = await streamEvents(store, SPACE_STREAM);
      expect(events).toHaveLength(1 + 3);
      expect(events.filter((event) => event.metadata.commandId === context.commandId)).toEqual([]);
    });

    test('a stale If-Match is precondition_failed before anything is appended', async () => {
      const store = await racingStoreWithSpace();
      const handler = new CommandHandler(store);
      await handler.handle(
        SPACE_STREAM,
        spaceDecider,
        { kind: 'UpdateSpace', name: 'Revenue' },
        commandContext(),
      );
      store.attemptedAppends = 0;

      await expectRefusal(
        handler.handle(
          SPACE_STREAM,
          spaceDecider,
          { kind: 'UpdateSpace', description: 'Deals' },
          commandContext(),
          {
            ifMatch: [0n],
          },
        ),
        'precondition_failed',
      );

      expect(store.attemptedAppends).toBe(0);
      expect(await streamEvents(store, SPACE_STREAM)).toHaveLength(2);
    });

    test('If-Match on a stream that does not exist is precondition_failed', async () => {
      await expectRefusal(
        new CommandHandler(new MemoryEventStore()).handle(
          SPACE_STREAM,
          spaceDecider,
          CREATE_SPACE,
          commandContext(),
          {
            ifMatch: [0n],
          },
        ),
        'precondition_failed',
      );
    });

    test('a current If-Match appends', async () => {
      const store = await racingStoreWithSpace();
      const result = await new CommandHandler(store).handle(
        SPACE_STREAM,
        spaceDecider,
        { kind: 'UpdateSpace', description: 'Deals' },
        commandContext(),
        { ifMatch: [0n] },
      );
      expect(result).toMatchObject({ revision: 1n, state: { description: 'Deals' } });
    });

    test('a concurrent append under If-Match is precondition_failed and not retried', async () => {
      const store = await racingStoreWithSpace();
      store.racesToInject = 1;

      await expectRefusal(
        new CommandHandler(store).handle(
          SPACE_STREAM,
          spaceDecider,
          { kind: 'UpdateSpace', description: 'Deals' },
          commandContext(),
          { ifMatch: [0n] },
        ),
        'precondition_failed',
      );

      expect(store.attemptedAppends).toBe(1);
      expect((await streamEvents(store, SPACE_STREAM)).map((event) => event.type)).toEqual([
        'SpaceCreated',
        'SpaceUpdated',
      ]);
    });
  });

  describe('mayBeRepeat', () => {
    test('a repeated command answers the state right after its first run, and appends nothing', async () => {
      const store = new MemoryEventStore();
      const handler = new CommandHandler(store);
      const context = commandContext();
      const first = await handler.handle(SPACE_STREAM, spaceDecider, CREATE_SPACE, context);
      await handler.handle(
        SPACE_STREAM,
        spaceDecider,
        { kind: 'UpdateSpace', name: 'Revenue' },
        commandContext(),
      );

      const repeat = await handler.handle(SPACE_STREAM, spaceDecider, CREATE_SPACE, context, {
        mayBeRepeat: true,
      });

      expect(repeat).toEqual({ ...first, replayed: true });
      expect(repeat.state.name).toBe('Sales');
      expect(await streamEvents(store, SPACE_STREAM)).toHaveLength(2);
    });

    test('a command whose first run was stored with an id of before event ids named the system is recognised', async () => {
      const store = new MemoryEventStore();
      const context = commandContext('7:finish');
      await store.append(
        SPACE_STREAM,
        [
          {
            // As releases before this one derived it: the command id alone.
            id: childId(context.commandId, '#0'),
            type: 'SpaceCreated',
            schemaVersion: 1,
            data: { spaceId: 7, name: 'Sales', description: null },
            metadata: { ...context, occurredAt: new Date().toISOString() },
          },
        ],
        { expectedRevision: 'no_stream' },
      );

      const repeat = await new CommandHandler(store).handle(
        SPACE_STREAM,
        spaceDecider,
        CREATE_SPACE,
        context,
        {
          mayBeRepeat: true,
        },
      );

      expect(repeat).toMatchObject({ revision: 0n, replayed: true, state: { name: 'Sales' } });
      expect(await streamEvents(store, SPACE_STREAM)).toHaveLength(1);
    });

    test('the same command id in two systems appends in both (event ids are unique store-wide)', async () => {
      const store = new MemoryEventStore();
      const handler = new CommandHandler(store);
      const inSystem = (tenant: string): CommandContext => ({ ...commandContext('1:finish'), tenant });
      for (const tenant of ['acme', 'other']) {
        const result = await handler.handle(
          streamName('space', tenant, 7),
          spaceDecider,
          CREATE_SPACE,
          inSystem(tenant),
          { mayBeRepeat: true },
        );
        expect(result).toMatchObject({ revision: 0n, replayed: false, state: { name: 'Sales' } });
      }
      const [a] = await streamEvents(store, streamName('space', 'acme', 7));
      const [b] = await streamEvents(store, streamName('space', 'other', 7));
      expect(a!.id).not.toBe(b!.id);
    });

    test('repeatAfter: a command that ran after the position is found among the latest events only', async () => {
      const store = new MemoryEventStore();
      const handler = new CommandHandler(store);
      const created = await handler.handle(SPACE_STREAM, spaceDecider, CREATE_SPACE, commandContext());
      const rename = commandContext('rename-once');
      const first = await handler.handle(
        SPACE_STREAM,
        spaceDecider,
        { kind: 'UpdateSpace', name: 'A' },
        rename,
      );
      await handler.handle(SPACE_STREAM, spaceDecider, { kind: 'UpdateSpace', name: 'B' }, commandContext());

      const repeat = await handler.handle(
        SPACE_STREAM,
        spaceDecider,
        { kind: 'UpdateSpace', name: 'A' },
        rename,
        {
          repeatAfter: created.position!,
        },
      );
      expect(repeat).toMatchObject({ replayed: true, position: first.position, state: { name: 'B' } });
      expect(await streamEvents(store, SPACE_STREAM)).toHaveLength(3);

      // A command not found after the position is decided (and appended) as usual.
      const anew = await handler.handle(
        SPACE_STREAM,
        spaceDecider,
        { kind: 'UpdateSpace', name: 'C' },
        commandContext('never-ran'),
        { repeatAfter: first.position! },
      );
      expect(anew).toMatchObject({ replayed: false, state: { name: 'C' } });
      expect(await streamEvents(store, SPACE_STREAM)).toHaveLength(4);
    });

    test('a command that may be a repeat but never ran is decided as usual', async () => {
      const result = await new CommandHandler(new MemoryEventStore()).handle(
        SPACE_STREAM,
        spaceDecider,
        CREATE_SPACE,
        commandContext(),
        { mayBeRepeat: true },
      );
      expect(result).toMatchObject({ revision: 0n, position: 1n, replayed: false });
    });

    test('without mayBeRepeat, running a create twice is refused', async () => {
      const handler = new CommandHandler(new MemoryEventStore());
      const context = commandContext();
      await handler.handle(SPACE_STREAM, spaceDecider, CREATE_SPACE, context);
      await expectRefusal(handler.handle(SPACE_STREAM, spaceDecider, CREATE_SPACE, context), 'conflict');
    });

    test('a repeat whose first run lands while the repeat reads answers as the first run, not "already exists"', async () => {
      const store = new ObservedEventStore();
      const context = commandContext();
      const firstRun = new CommandHandler(store);
      let first: unknown;
      store.afterNextRead = async () => {
        first = await firstRun.handle(SPACE_STREAM, spaceDecider, CREATE_SPACE, context);
      };

      const repeat = await new CommandHandler(store).handle(
        SPACE_STREAM,
        spaceDecider,
        CREATE_SPACE,
        context,
        {
          mayBeRepeat: true,
        },
      );

      expect(first).toMatchObject({ revision: 0n, position: 1n });
      expect(repeat).toMatchObject({
        revision: 0n,
        position: 1n,
        state: { status: 'active', name: 'Sales' },
      });
      expect(await streamEvents(store, SPACE_STREAM)).toHaveLength(1);
    });
  });

  describe('aggregate cache', () => {
    test('catches up on events appended behind its back, reading only the events after its revision', async () => {
      const store = new ObservedEventStore();
      const cached = new CommandHandler(store);
      const other = new CommandHandler(store);
      await cached.handle(SPACE_STREAM, spaceDecider, CREATE_SPACE, commandContext());
      await other.handle(
        SPACE_STREAM,
        spaceDecider,
        { kind: 'UpdateSpace', name: 'Revenue' },
        commandContext(),
      );
      store.reads.length = 0;

      const result = await cached.handle(
        SPACE_STREAM,
        spaceDecider,
        { kind: 'UpdateSpace', name: 'Revenue' },
        commandContext(),
      );

      expect(store.reads).toEqual([{ streamId: SPACE_STREAM, options: { fromRevision: 1n } }]);
      expect(result).toMatchObject({ revision: 1n, position: undefined, state: { name: 'Revenue' } });
    });

    test('load answers the folded state of the whole stream', async () => {
      const store = new MemoryEventStore();
      const handler = new CommandHandler(store);
      await handler.handle(SPACE_STREAM, spaceDecider, CREATE_SPACE, commandContext());
      await handler.handle(SPACE_STREAM, spaceDecider, { kind: 'DeleteSpace', modules: 0 }, commandContext());

      const fresh = await new CommandHandler(store).load(SPACE_STREAM, spaceDecider);

      expect(fresh).toEqual({
        state: { status: 'deleted', spaceId: 7, name: 'Sales', description: null },
        revision: 1n,
        position: 2n,
      });
    });

    test('an uncached command and a peek keep nothing: the next load reads the stream whole', async () => {
      const store = new ObservedEventStore();
      const handler = new CommandHandler(store);
      await handler.handle(SPACE_STREAM, spaceDecider, CREATE_SPACE, commandContext(), {
        newStream: true,
        uncached: true,
      });
      expect((await handler.peek(SPACE_STREAM, spaceDecider)).state).toMatchObject({ name: 'Sales' });
      store.reads.length = 0;
      await handler.load(SPACE_STREAM, spaceDecider);
      expect(store.reads).toEqual([{ streamId: SPACE_STREAM, options: { fromRevision: 0n } }]);
    });

    test('evicts the least recently used stream beyond its capacity', () => {
      const cache = new AggregateCache(2);
      const entry = (revision: bigint): { state: string; revision: bigint; position: bigint } => ({
        state: `at ${revision}`,
        revision,
        position: revision,
      });
      cache.set('a', entry(1n));
      cache.set('b', entry(2n));
      expect(cache.get<string>('a')?.state).toBe('at 1');
      cache.set('c', entry(3n));
      expect(cache.get('b')).toBeUndefined();
      expect(cache.get<string>('a')?.state).toBe('at 1');
      expect(cache.get<string>('c')?.state).toBe('at 3');
    });

    test('beyond its capacity, drops the least recently used tenth at once', () => {
      const cache = new AggregateCache(20);
      const entry = (revision: number): { state: number; revision: bigint; position: bigint } => ({
        state: revision,
        revision: BigInt(revision),
        position: BigInt(revision),
      });
      for (let stream = 0; stream < 20; stream++) cache.set(`s${stream}`, entry(stream));
      expect(cache.get<number>('s0')?.state).toBe(0);
      cache.set('s20', entry(20));
      const kept = Array.from({ length: 21 }, (_, stream) => `s${stream}`).filter(
        (stream) => cache.get(stream) !== undefined,
      );
      // s1, s2 and s3 were the least recently used: s0 was read after them.
      expect(kept).toEqual(['s0', ...Array.from({ length: 17 }, (_, index) => `s${index + 4}`)]);
    });

    test('a stream read before every new one (a module under record commands) outlives many evictions', () => {
      const cache = new AggregateCache(10);
      const entry = { state: 'module', revision: 0n, position: 0n };
      cache.set('module', entry);
      for (let stream = 0; stream < 100; stream++) {
        expect(cache.get('module')).toBe(entry);
        cache.set(`record ${stream}`, { state: 'record', revision: 0n, position: BigInt(stream) });
      }
      const kept = Array.from({ length: 100 }, (_, stream) => `record ${stream}`).filter(
        (stream) => cache.get(stream) !== undefined,
      );
      // Evicted at 11 entries down to 9: the module and the newest records, never more than the capacity.
      expect(kept.length).toBeLessThanOrEqual(9);
      expect(kept).toEqual(
        Array.from({ length: kept.length }, (_, index) => `record ${100 - kept.length + index}`),
      );
    });
  });
});

/** Counts the calls of `appendToStreams` and the appends made outside it. */
class CountingEventStore extends ObservedEventStore {
  appendToStreamsCalls = 0;
  private insideAppendToStreams = false;
  appendsOutside = 0;

  override async appendToStreams(appends: readonly StreamAppend[]): Promise<StreamAppendOutcome[]> {
    this.appendToStreamsCalls++;
    this.insideAppendToStreams = true;
    try {
      return await super.appendToStreams(appends);
    } finally {
      this.insideAppendToStreams = false;
    }
  }

  override async append(
    streamId: string,
    events: readonly NewEvent[],
    options?: AppendOptions,
  ): Promise<AppendResult> {
    if (!this.insideAppendToStreams) this.appendsOutside++;
    return super.append(streamId, events, options);
  }
}

function createSpace(spaceId: number): { streamId: string; command: SpaceCommand; context: CommandContext } {
  return {
    streamId: streamName('space', TENANT, spaceId),
    command: { kind: 'CreateSpace', spaceId, name: `Space ${spaceId}`, description: null },
    context: commandContext(),
  };
}

function refusalKind(outcome: CommandOutcome<SpaceState> | undefined): ErrorKind | undefined {
  if (outcome === undefined || outcome.ok) return undefined;
  return outcome.error instanceof PlatformError ? outcome.error.kind : undefined;
}

describe('CommandHandler.handleNewStreams', () => {
  test('decides each command on a new stream and appends them all at once: one result per command', async () => {
    const store = new CountingEventStore();
    const handler = new CommandHandler(store);
    const commands = [createSpace(1), createSpace(2)];

    const outcomes = await handler.handleNewStreams(spaceDecider, commands);

    expect(outcomes).toEqual([
      {
        ok: true,
        result: {
          state: { status: 'active', spaceId: 1, name: 'Space 1', description: null },
          revision: 0n,
          position: 1n,
          replayed: false,
        },
      },
      {
        ok: true,
        result: {
          state: { status: 'active', spaceId: 2, name: 'Space 2', description: null },
          revision: 0n,
          position: 2n,
          replayed: false,
        },
      },
    ]);
    expect([store.appendToStreamsCalls, store.appendsOutside]).toEqual([1, 0]);
    expect(store.reads).toEqual([]);
    const [stored] = await streamEvents(store, commands[1]!.streamId);
    expect(stored).toMatchObject({
      id: eventIdFor(TENANT, commands[1]!.context.commandId, 0),
      type: 'SpaceCreated',
      metadata: { commandId: commands[1]!.context.commandId, tenant: TENANT },
    });

    // The new states are cached: a later command reads only what came after them.
    store.reads.length = 0;
    await handler.handle(
      commands[0]!.streamId,
      spaceDecider,
      { kind: 'UpdateSpace', name: 'x' },
      commandContext(),
    );
    expect(store.reads).toEqual([{ streamId: commands[0]!.streamId, options: { fromRevision: 1n } }]);
  });

  test('a refused command fails alone and appends nothing', async () => {
    const store = new CountingEventStore();
    const refused = { ...createSpace(2), command: { kind: 'DeleteSpace', modules: 0 } as SpaceCommand };
    const invalid = createSpace(0);

    const outcomes = await new CommandHandler(store).handleNewStreams(spaceDecider, [
      createSpace(1),
      refused,
      invalid,
      createSpace(3),
    ]);

    expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, false, false, true]);
    expect(outcomes.map(refusalKind)).toEqual([undefined, 'not_found', 'internal', undefined]);
    expect(await store.headPosition()).toBe(2n);
    expect(await streamEvents(store, refused.streamId)).toEqual([]);
  });

  test('a stream that exists after all is read and decided again', async () => {
    const store = new CountingEventStore();
    const handler = new CommandHandler(store);
    await new CommandHandler(store).handle(SPACE_STREAM, spaceDecider, CREATE_SPACE, commandContext());
    store.reads.length = 0;

    const outcomes = await handler.handleNewStreams(spaceDecider, [createSpace(6), createSpace(7)]);

    expect(outcomes.map(refusalKind)).toEqual([undefined, 'conflict']);
    expect(store.reads.map((read) => read.streamId)).toEqual([SPACE_STREAM]);
    expect(await streamEvents(store, SPACE_STREAM)).toHaveLength(1);
  });

  test('no commands, no appends', async () => {
    const store = new CountingEventStore();
    await expect(new CommandHandler(store).handleNewStreams(spaceDecider, [])).resolves.toEqual([]);
    expect(store.appendToStreamsCalls).toBe(0);
  });
});

describe('loadingEachStreamOnce', () => {
  test('reads each stream once and answers its later loads from that read', async () => {
    const store = new ObservedEventStore();
    const handler = new CommandHandler(store);
    await handler.handle(SPACE_STREAM, spaceDecider, CREATE_SPACE, commandContext());
    const other = streamName('space', TENANT, 8);
    store.reads.length = 0;

    const once = loadingEachStreamOnce(handler);
    const [first, second] = await Promise.all([
      once.load(SPACE_STREAM, spaceDecider),
      once.load(SPACE_STREAM, spaceDecider),
    ]);
    await once.load(SPACE_STREAM, spaceDecider);
    await once.load(other, spaceDecider);

    expect(first).toBe(second);
    expect(first.state).toMatchObject({ status: 'active', name: 'Sales' });
    expect(store.reads.map((read) => read.streamId)).toEqual([SPACE_STREAM, other]);
    // The handler itself still reads every time.
    await handler.load(SPACE_STREAM, spaceDecider);
    expect(store.reads).toHaveLength(3);
  });
});

describe('IdAllocator', () => {
  async function reservedBlocks(store: MemoryEventStore, sequence: string): Promise<IdBlockReservedData[]> {
    const events = await streamEvents(store, streamName('sequence', TENANT, sequence));
    expect(events.every((event) => event.type === 'IdBlockReserved')).toBe(true);
    return events.map((event) => event.data as IdBlockReservedData);
  }

  test('hands out increasing ids from blocks it reserves in the sequence stream', async () => {
    const store = new MemoryEventStore();
    const ids = new IdAllocator(store, 3);
    const handedOut: number[] = [];
    for (let i = 0; i < 7; i++) handedOut.push(await ids.next(TENANT, 'space'));

    expect(handedOut).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await reservedBlocks(store, 'space')).toEqual([
      { sequence: 'space', from: 1, to: 3 },
      { sequence: 'space', from: 4, to: 6 },
      { sequence: 'space', from: 7, to: 9 },
    ]);
  });

  test('concurrent calls share one reservation per block', async () => {
    const store = new MemoryEventStore();
    const ids = new IdAllocator(store, 4);

    const handedOut = await Promise.all(Array.from({ length: 50 }, () => ids.next(TENANT, 'record')));

    expect([...handedOut].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(await reservedBlocks(store, 'record')).toHaveLength(Math.ceil(50 / 4));
  });

  test('two allocators on one store never hand out the same id', async () => {
    const store = new MemoryEventStore();
    const first = new IdAllocator(store, 7);
    const second = new IdAllocator(store, 7);
    const calls = 200;

    const [fromFirst, fromSecond] = await Promise.all([
      Promise.all(Array.from({ length: calls }, () => first.next(TENANT, 'record'))),
      Promise.all(Array.from({ length: calls }, () => second.next(TENANT, 'record'))),
    ]);

    const all = [...fromFirst, ...fromSecond];
    expect(new Set(all).size).toBe(2 * calls);
    const blocks = await reservedBlocks(store, 'record');
    blocks.forEach((block, index) => {
      expect(block.to - block.from + 1).toBe(7);
      expect(block.from).toBe(index === 0 ? 1 : blocks[index - 1]!.to + 1);
    });
    const blockOf = (id: number): number => blocks.findIndex((block) => block.from <= id && id <= block.to);
    expect(all.every((id) => blockOf(id) >= 0)).toBe(true);
    const firstBlocks = new Set(fromFirst.map(blockOf));
    expect(fromSecond.some((id) => firstBlocks.has(blockOf(id)))).toBe(false);
  });

  test('keeps tenants and sequences apart', async () => {
    const ids = new IdAllocator(new MemoryEventStore(), 10);
    expect(await ids.next(TENANT, 'space')).toBe(1);
    expect(await ids.next(TENANT, 'space')).toBe(2);
    expect(await ids.next(TENANT, 'module')).toBe(1);
    expect(await ids.next('globex', 'space')).toBe(1);
  });

  test('a new allocator continues after the last reserved block, skipping ids never handed out', async () => {
    const store = new MemoryEventStore();
    expect(await new IdAllocator(store, 10).next(TENANT, 'space')).toBe(1);
    expect(await new IdAllocator(store, 10).next(TENANT, 'space')).toBe(11);
  });
});

describe('IdempotencyKeys', () => {
  const hash = requestHash('POST', '/space', { name: 'Sales' });

  function countingAllocator(firstId = 41): { next: () => Promise<number>; calls: () => number } {
    let calls = 0;
    return {
      next: async () => firstId + calls++,
      calls: () => calls,
    };
  }

  async function claims(store: MemoryEventStore): Promise<RecordedEvent[]> {
    return collect(store.readAll({ filter: { categories: ['idempotency'] } }));
  }

  test('without a key, every request is a new command and nothing is stored', async () => {
    const store = new MemoryEventStore();
    const keys = new IdempotencyKeys(store);
    const allocator = countingAllocator();

    const first = await keys.identify(TENANT, 'token-1', undefined, () => hash, allocator.next);
    const second = await keys.identify(TENANT, 'token-1', undefined, () => hash, allocator.next);

    expect(first).toMatchObject({ entityId: 41, mayBeRepeat: false });
    expect(second).toMatchObject({ entityId: 42, mayBeRepeat: false });
    expect(first.commandId).not.toBe(second.commandId);
    expect(await store.headPosition()).toBe(0n);
  });

  test('the first use of a key claims it with the command id, request hash and new entity id', async () => {
    const store = new MemoryEventStore();
    const identity = await new IdempotencyKeys(store).identify(
      TENANT,
      'token-1',
      'key-1',
      () => hash,
      async () => 41,
    );

    expect(identity).toEqual({ commandId: expect.any(String), entityId: 41, mayBeRepeat: false });
    const [claim, ...more] = await claims(store);
    expect(more).toEqual([]);
    // Event ids are unique store-wide: the claim must not take the id of the command's own first event.
    expect(claim!.id).not.toBe(eventIdFor(TENANT, identity.commandId, 0));
    expect(claim).toMatchObject({
      type: 'IdempotencyKeyClaimed',
      revision: 0n,
      data: { requestHash: hash, commandId: identity.commandId, entityId: 41 },
      metadata: {
        tenant: TENANT,
        actor: { userId: null, credentialId: 'token-1' },
        commandId: identity.commandId,
      },
    });
  });

  test('a key for a command that creates nothing claims a null entity id', async () => {
    const identity = await new IdempotencyKeys(new MemoryEventStore()).identify(
      TENANT,
      'token-1',
      'key-1',
      () => hash,
      null,
    );
    expect(identity).toMatchObject({ entityId: null, mayBeRepeat: false });
  });

  test('a repeat with the same request may be a repeat, with the same command and entity ids', async () => {
    const store = new MemoryEventStore();
    const keys = new IdempotencyKeys(store);
    const allocator = countingAllocator();
    const first = await keys.identify(TENANT, 'token-1', 'key-1', () => hash, allocator.next);

    const repeat = await keys.identify(TENANT, 'token-1', 'key-1', () => hash, allocator.next);

    expect(repeat).toEqual({ commandId: first.commandId, entityId: first.entityId, mayBeRepeat: true });
    expect(allocator.calls()).toBe(1);
    expect(await claims(store)).toHaveLength(1);
  });

  test('a repeat with a different request is idempotency_key_reused', async () => {
    const keys = new IdempotencyKeys(new MemoryEventStore());
    await keys.identify(
      TENANT,
      'token-1',
      'key-1',
      () => hash,
      async () => 41,
    );
    const otherHash = requestHash('POST', '/space', { name: 'Other' });
    await expectRefusal(
      keys.identify(
        TENANT,
        'token-1',
        'key-1',
        () => otherHash,
        async () => 42,
      ),
      'idempotency_key_reused',
    );
  });

  test('the same key of another credential or tenant is a different key', async () => {
    const keys = new IdempotencyKeys(new MemoryEventStore());
    const first = await keys.identify(
      TENANT,
      'token-1',
      'key-1',
      () => hash,
      async () => 41,
    );
    const otherCredential = await keys.identify(
      TENANT,
      'token-2',
      'key-1',
      () => hash,
      async () => 42,
    );
    const otherTenant = await keys.identify(
      'globex',
      'token-1',
      'key-1',
      () => hash,
      async () => 43,
    );

    expect(otherCredential).toMatchObject({ entityId: 42, mayBeRepeat: false });
    expect(otherTenant).toMatchObject({ entityId: 43, mayBeRepeat: false });
    expect(new Set([first.commandId, otherCredential.commandId, otherTenant.commandId]).size).toBe(3);
  });

  test.each([
    ['empty', ''],
    ['with a space', 'my key'],
    ['with a newline', 'key\n'],
    ['non-ASCII', 'clé'],
    ['longer than 255 characters', 'k'.repeat(256)],
  ])('an invalid key (%s) is validation_failed', async (_label, key) => {
    const store = new MemoryEventStore();
    await expectRefusal(
      new IdempotencyKeys(store).identify(
        TENANT,
        'token-1',
        key,
        () => hash,
        async () => 41,
      ),
      'validation_failed',
    );
    expect(await store.headPosition()).toBe(0n);
  });

  test('accepts 255 visible ASCII characters', async () => {
    const key = '!~'.repeat(127) + 'x';
    const identity = await new IdempotencyKeys(new MemoryEventStore()).identify(
      TENANT,
      'token-1',
      key,
      () => hash,
      null,
    );
    expect(identity.mayBeRepeat).toBe(false);
  });

  test('two concurrent first uses of a key: one claims it, the other is its repeat', async () => {
    const store = new MemoryEventStore();
    const keys = new IdempotencyKeys(store);
    let arrived = 0;
    let releaseBoth!: () => void;
    const bothArrived = new Promise<void>((resolve) => (releaseBoth = resolve));
    // Both requests get past "is the key claimed?" before either claims it.
    const allocate = async (): Promise<number> => {
      const id = 40 + ++arrived;
      if (arrived === 2) releaseBoth();
      await bothArrived;
      return id;
    };

    const [a, b] = await Promise.all([
      keys.identify(TENANT, 'token-1', 'key-1', () => hash, allocate),
      keys.identify(TENANT, 'token-1', 'key-1', () => hash, allocate),
    ]);

    expect(arrived).toBe(2);
    expect([a.mayBeRepeat, b.mayBeRepeat].sort()).toEqual([false, true]);
    expect(b.commandId).toBe(a.commandId);
    expect(b.entityId).toBe(a.entityId);
    const [claim, ...more] = await claims(store);
    expect(more).toEqual([]);
    expect((claim!.data as IdempotencyKeyClaimedData).commandId).toBe(a.commandId);
  });

  test('with the handler: a repeated create answers the first result and appends nothing', async () => {
    const store = new MemoryEventStore();
    const keys = new IdempotencyKeys(store);
    const ids = new IdAllocator(store, 10);
    const handler = new CommandHandler(store);
    const createSpace = async (): Promise<{ spaceId: number; replayed: boolean; state: SpaceState }> => {
      const identity = await keys.identify(
        TENANT,
        'token-1',
        'key-1',
        () => hash,
        () => ids.next(TENANT, 'space'),
      );
      const spaceId = identity.entityId!;
      const result = await handler.handle(
        streamName('space', TENANT, spaceId),
        spaceDecider,
        { kind: 'CreateSpace', spaceId, name: 'Sales', description: null },
        commandContext(identity.commandId),
        { mayBeRepeat: identity.mayBeRepeat },
      );
      return { spaceId, replayed: result.replayed, state: result.state };
    };

    const first = await createSpace();
    const repeat = await createSpace();

    expect(first).toMatchObject({ spaceId: 1, replayed: false });
    expect(repeat).toEqual({ ...first, replayed: true });
    expect(await collect(store.readAll({ filter: { categories: ['space'] } }))).toHaveLength(1);
    expect(await ids.next(TENANT, 'space')).toBe(2);
  });
});
