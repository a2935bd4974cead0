import type { Actor } from '../../contracts/events/envelope';
import type { NewEvent, RecordedEvent } from '../../contracts/events/envelope';
import { PlatformError } from '../../contracts/errors';
import { eventIdFor } from '../../contracts/ids';
import { personalSubject } from '../../contracts/personal-data';
import { assertValidEventData, upcast, schemaVersionOf } from '../../contracts/events/registry';
import type { EventStore, ExpectedRevision, StreamAppend } from '../../infra/event-store/port';
import { WrongExpectedRevisionError } from '../../infra/event-store/port';
import { fold, type Decider, type DomainEvent } from './decider';

/** Everything a command carries besides its payload: who, which tenant, and the ids that link events. */
export interface CommandContext {
  readonly tenant: string;
  readonly actor: Actor;
  readonly commandId: string;
  readonly correlationId: string;
  readonly causationId: string;
}

/** A command's context but for its id (a create takes it from its idempotency claim). */
export type CommandOrigin = Omit<CommandContext, 'commandId'>;

/** The context of `origin`'s command `commandId`: a request that issues several gives each its own id. */
export function withCommandId(origin: CommandOrigin, commandId: string): CommandContext {
  return { ...origin, commandId };
}

/** The context of write-side bookkeeping (id blocks, idempotency claims): its own command, no user. */
export function bookkeepingContext(
  tenant: string,
  commandId: string,
  actor: Actor = { userId: null },
): CommandContext {
  return { tenant, actor, commandId, correlationId: commandId, causationId: commandId };
}

/** Wraps a domain event in the envelope, after checking its data against the event's schema. */
export function toNewEvent(event: DomainEvent, id: string, context: CommandContext): NewEvent {
  assertValidEventData(event.type, event.data);
  return {
    id,
    type: event.type,
    schemaVersion: schemaVersionOf(event.type),
    data: event.data,
    metadata: {
      tenant: context.tenant,
      actor: context.actor,
      correlationId: context.correlationId,
      causationId: context.causationId,
      commandId: context.commandId,
      occurredAt: new Date().toISOString(),
    },
    ...(event.personal && {
      sealing: {
        subject: personalSubject(
          event.personal.kind,
          event.personal.tenant ?? context.tenant,
          event.personal.id,
        ),
        paths: event.personal.paths,
      },
    }),
  };
}

export interface CommandResult<State> {
  readonly state: State;
  /** Revision of the stream after the command (undefined: the stream still does not exist). */
  readonly revision: bigint | undefined;
  /** Global position reached by the command's events (undefined: nothing was appended). */
  readonly position: bigint | undefined;
  /** True when the command had already been applied (a repeated Idempotency-Key). */
  readonly replayed: boolean;
}

/** What became of one command of `handleNewStreams`: its result, or what refused it. */
export type CommandOutcome<State> =
  | { readonly ok: true; readonly result: CommandResult<State> }
  | { readonly ok: false; readonly error: unknown };

/** A command on a stream whose id was just allocated (see `handleNewStreams`). */
export interface NewStreamCommand<Command> {
  readonly streamId: string;
  readonly command: Command;
  readonly context: CommandContext;
}

export interface HandleOptions {
  /** The revisions the client accepts, any of them (If-Match); a mismatch is a 412 and is not retried. */
  readonly ifMatch?: readonly bigint[];
  /** A command that may already have run: look for its events in the stream before deciding again. */
  readonly mayBeRepeat?: boolean;
  /**
   * A command that may already have run, and if it did, after this position: its events are looked for among
   * the stream's latest events only (read back to it), not in the whole stream as `mayBeRepeat` does. Found,
   * the result is the stream's current state with the position of those events (`replayed`).
   */
  readonly repeatAfter?: bigint;
  /**
   * The stream is new (its id was just allocated): decide on the initial state without reading it. Should
   * it exist after all, the append fails its `no_stream` expectation and the handler reads it and retries.
   */
  readonly newStream?: boolean;
  /** The stream's state is not kept in the aggregate cache (streams read once or twice, with a large state). */
  readonly uncached?: boolean;
  readonly maxAttempts?: number;
}

interface Loaded<State> {
  state: State;
  revision: bigint | undefined;
  position: bigint | undefined;
}

/**
 * Folded aggregate states by stream, so a hot aggregate is not re-read whole for every command. An entry
 * is only a starting point: the handler always reads the events after its revision before deciding.
 */
export class AggregateCache {
  private readonly entries = new Map<string, { loaded: Loaded<unknown>; lastUsed: number }>();
  private clock = 0;

  constructor(private readonly capacity = 10_000) {}

  /**
   * A use is a stamp on the entry, not a move to the Map's end: deleting and re-adding a key of a 10,000-entry
   * Map cost ~30 µs here, and a record command moved its module that way on every use (measured: 15–17 µs of
   * cache calls per command before, ~2 µs with stamps).
   */
  get<State>(streamId: string): Loaded<State> | undefined {
    const entry = this.entries.get(streamId);
    if (entry === undefined) return undefined;
    entry.lastUsed = ++this.clock;
    return entry.loaded as Loaded<State>;
  }

  set<State>(streamId: string, loaded: Loaded<State>): void {
    const entry = this.entries.get(streamId);
    if (entry !== undefined) {
      entry.loaded = loaded;
      entry.lastUsed = ++this.clock;
      return;
    }
    this.entries.set(streamId, { loaded, lastUsed: ++this.clock });
    if (this.entries.size > this.capacity) this.evictLeastRecentlyUsed();
  }

  /** Drops the least recently used tenth at once, so the sort of the stamps is paid once per many `set`s. */
  private evictLeastRecentlyUsed(): void {
    const excess = this.entries.size - this.capacity + Math.floor(this.capacity / 10);
    const stamps = Float64Array.from(this.entries.values(), (entry) => entry.lastUsed).sort();
    const keptFrom = stamps[excess] ?? Number.POSITIVE_INFINITY;
    for (const [streamId, entry] of this.entries)
      if (entry.lastUsed < keptFrom) this.entries.delete(streamId);
  }
}

/** What reads aggregates without changing them: `CommandHandler.load`. */
export type AggregateLoader = Pick<CommandHandler, 'load'>;

/**
 * A loader that reads each stream once and answers its later loads from that first read: for one request
 * that reads the same aggregates for many items (each item of a bulk create reads its module). Its answers
 * age, so it lives for one request only.
 */
export function loadingEachStreamOnce(aggregates: AggregateLoader): AggregateLoader {
  const loads = new Map<string, Promise<Loaded<unknown>>>();
  return {
    load<State, Event extends DomainEvent>(
      streamId: string,
      decider: Decider<State, never, Event>,
    ): Promise<Loaded<State>> {
      let load = loads.get(streamId);
      if (!load) {
        load = aggregates.load(streamId, decider);
        loads.set(streamId, load);
      }
      // A stream belongs to one aggregate, so every load of it folds with the same decider.
      return load as Promise<Loaded<State>>;
    },
  };
}

function toDomainEvent<Event extends DomainEvent>(recorded: RecordedEvent): Event {
  return upcast(recorded) as Event;
}

export class CommandHandler {
  constructor(
    private readonly store: EventStore,
    private readonly cache: AggregateCache = new AggregateCache(),
  ) {}

  /** Reads the stream and folds it (from the cache's revision on). */
  async load<State, Event extends DomainEvent>(
    streamId: string,
    decider: Decider<State, never, Event>,
  ): Promise<Loaded<State>> {
    const cached = this.cache.get<State>(streamId);
    let { state, revision, position } = cached ?? {
      state: decider.initialState,
      revision: undefined,
      position: undefined,
    };
    const fromRevision = revision === undefined ? 0n : revision + 1n;
    for await (const recorded of this.store.readStream(streamId, { fromRevision })) {
      state = decider.evolve(state, toDomainEvent<Event>(recorded));
      revision = recorded.revision;
      position = recorded.position;
    }
    const loaded = { state, revision, position };
    this.cache.set(streamId, loaded);
    return loaded;
  }

  /** Reads the stream and folds it, keeping nothing in the cache (see `HandleOptions.uncached`). */
  async peek<State, Event extends DomainEvent>(
    streamId: string,
    decider: Decider<State, never, Event>,
  ): Promise<Loaded<State>> {
    let loaded: Loaded<State> = { state: decider.initialState, revision: undefined, position: undefined };
    for await (const recorded of this.store.readStream(streamId))
      loaded = {
        state: decider.evolve(loaded.state, toDomainEvent<Event>(recorded)),
        revision: recorded.revision,
        position: recorded.position,
      };
    return loaded;
  }

  /**
   * Reads the whole stream in one pass: the current state, and the state right after the events `commandId`
   * appended earlier (null when it never appended). One read for both, so a first run that lands between
   * "look for it" and "decide" cannot make its repeat fail (e.g. as "already exists").
   */
  private async loadLookingFor<State, Event extends DomainEvent>(
    streamId: string,
    decider: Decider<State, never, Event>,
    commandId: string,
  ): Promise<{ loaded: Loaded<State>; previous: Loaded<State> | null }> {
    let loaded: Loaded<State> = { state: decider.initialState, revision: undefined, position: undefined };
    let previous: Loaded<State> | null = null;
    for await (const recorded of this.store.readStream(streamId)) {
      loaded = {
        state: decider.evolve(loaded.state, toDomainEvent<Event>(recorded)),
        revision: recorded.revision,
        position: recorded.position,
      };
      if (recorded.metadata.commandId === commandId) previous = loaded;
    }
    this.cache.set(streamId, loaded);
    return { loaded, previous };
  }

  /**
   * Commands that each create a new stream (its id was just allocated), as `handle` with `newStream` does
   * one: each is decided on the initial state without reading, and all their events go to the store in one
   * `appendToStreams` (on SQLite, one transaction for them all). One outcome per command, in order; a
   * refused command fails alone. A stream that exists after all fails its `no_stream` expectation, and its
   * command goes through `handle`, which reads the stream and decides again.
   */
  async handleNewStreams<State, Command, Event extends DomainEvent>(
    decider: Decider<State, Command, Event>,
    commands: readonly NewStreamCommand<Command>[],
  ): Promise<CommandOutcome<State>[]> {
    const outcomes = new Array<CommandOutcome<State>>(commands.length);
    const decided: Array<{ readonly index: number; readonly events: readonly Event[] }> = [];
    const appends: StreamAppend[] = [];
    commands.forEach(({ streamId, command, context }, index) => {
      try {
        const events = decider.decide(command, decider.initialState);
        if (events.length === 0) {
          const unchanged = { state: decider.initialState, revision: undefined, position: undefined };
          outcomes[index] = { ok: true, result: { ...unchanged, replayed: false } };
          return;
        }
        appends.push({
          streamId,
          events: events.map((event, n) =>
            toNewEvent(event, eventIdFor(context.tenant, context.commandId, n), context),
          ),
          expectedRevision: 'no_stream',
        });
        decided.push({ index, events });
      } catch (error) {
        outcomes[index] = { ok: false, error };
      }
    });
    const appended = appends.length === 0 ? [] : await this.store.appendToStreams(appends);
    const handledAgain: Promise<void>[] = [];
    appended.forEach((outcome, appendIndex) => {
      const { index, events } = decided[appendIndex]!;
      const { streamId, command, context } = commands[index]!;
      if (outcome.ok) {
        const after = {
          state: fold(decider, decider.initialState, events),
          revision: outcome.result.nextExpectedRevision,
          position: outcome.result.position,
        };
        this.cache.set(streamId, after);
        outcomes[index] = { ok: true, result: { ...after, replayed: false } };
      } else if (outcome.error instanceof WrongExpectedRevisionError) {
        handledAgain.push(
          this.handle(streamId, decider, command, context).then(
            (result) => {
              outcomes[index] = { ok: true, result };
            },
            (error: unknown) => {
              outcomes[index] = { ok: false, error };
            },
          ),
        );
      } else {
        outcomes[index] = { ok: false, error: outcome.error };
      }
    });
    await Promise.all(handledAgain);
    return outcomes;
  }

  /** What command `commandId` made of the stream, if it ran there (a repeat answers it again); else undefined. */
  async resultOf<State, Event extends DomainEvent>(
    streamId: string,
    decider: Decider<State, never, Event>,
    commandId: string,
  ): Promise<CommandResult<State> | undefined> {
    const { previous } = await this.loadLookingFor(streamId, decider, commandId);
    return previous ? { ...previous, replayed: true } : undefined;
  }

  /** The position of the last event `commandId` appended to the stream after `after` (undefined: none). */
  private async appendedAfter(
    streamId: string,
    commandId: string,
    after: bigint,
  ): Promise<bigint | undefined> {
    for await (const recorded of this.store.readStream(streamId, { direction: 'backwards' })) {
      if (recorded.position <= after) return undefined;
      if (recorded.metadata.commandId === commandId) return recorded.position;
    }
    return undefined;
  }

  async handle<State, Command, Event extends DomainEvent>(
    streamId: string,
    decider: Decider<State, Command, Event>,
    command: Command,
    context: CommandContext,
    options: HandleOptions = {},
  ): Promise<CommandResult<State>> {
    const maxAttempts = options.maxAttempts ?? 10;
    if (options.repeatAfter !== undefined) {
      const position = await this.appendedAfter(streamId, context.commandId, options.repeatAfter);
      if (position !== undefined) {
        const loaded = await this.load(streamId, decider);
        return { ...loaded, position, replayed: true };
      }
    }
    for (let attempt = 1; ; attempt++) {
      const { loaded, previous } = options.mayBeRepeat
        ? await this.loadLookingFor(streamId, decider, context.commandId)
        : options.newStream && attempt === 1
          ? {
              loaded: { state: decider.initialState, revision: undefined, position: undefined },
              previous: null,
            }
          : {
              loaded: options.uncached
                ? await this.peek(streamId, decider)
                : await this.load(streamId, decider),
              previous: null,
            };
      if (previous) return { ...previous, replayed: true };
      if (
        options.ifMatch !== undefined &&
        (loaded.revision === undefined || !options.ifMatch.includes(loaded.revision))
      ) {
        throw new PlatformError(
          'precondition_failed',
          `If-Match revision ${options.ifMatch.join(', ')} is stale; the current revision is ${String(loaded.revision ?? 'none')}`,
        );
      }
      const events = decider.decide(command, loaded.state);
      if (events.length === 0) return { ...loaded, position: undefined, replayed: false };
      const expectedRevision: ExpectedRevision = loaded.revision ?? 'no_stream';
      try {
        const result = await this.store.append(
          streamId,
          events.map((event, index) =>
            toNewEvent(event, eventIdFor(context.tenant, context.commandId, index), context),
          ),
          { expectedRevision },
        );
        const state = events.reduce((current, event) => decider.evolve(current, event), loaded.state);
        const after = { state, revision: result.nextExpectedRevision, position: result.position };
        if (!options.uncached) this.cache.set(streamId, after);
        return { ...after, replayed: false };
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        if (options.ifMatch !== undefined) {
          throw new PlatformError(
            'precondition_failed',
            `the resource changed concurrently; re-read it and retry with its new ETag`,
          );
        }
        if (attempt >= maxAttempts) {
          throw new PlatformError(
            'conflict',
            `too many concurrent changes to ${streamId}; retry the request`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 * attempt));
      }
    }
  }
}
