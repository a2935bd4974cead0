import type { PersonalValues } from '../../contracts/personal-data';
import type { Actor, EventMetadata, RecordedEvent } from '../../contracts/events/envelope';
import { PlatformError, type ErrorKind } from '../../contracts/errors';
import { OAuthError } from '../../contracts/oauth';
import { assertValidEventData, isKnownEventType, schemaVersionOf } from '../../contracts/events/registry';
import { eventIdFor, uuidV5 } from '../../contracts/ids';
import { fold, type Decider, type DomainEvent } from '../../command-api/kit/decider';
import { projectEvent, type Projection } from '../../projections/projection';
import type { Document, ReadModelChange } from '../../contracts/read-model-changes';
import { applyPatch, copiedDocument } from '../../infra/read-store/patch';

// ---------------------------------------------------------------------------------------------------------
// Deciders
// ---------------------------------------------------------------------------------------------------------

function assertSchemaValid(events: readonly DomainEvent[], role: string): void {
  for (const event of events) {
    try {
      assertValidEventData(event.type, event.data);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`${role} event ${event.type} does not match its registered schema: ${reason}`);
    }
  }
}

/**
 * The outcome of one command against a history, checked by exactly one of the `then…` methods. Do not
 * `await` an outcome: its `then` method makes it look like a promise.
 */
export interface DeciderOutcome<State, Event extends DomainEvent> {
  /**
   * The command produced exactly `expected` (which values are personal compared only for the expected events
   * that say, by `personal`), and every produced event matches its registered schema.
   * Returns the state after folding the produced events, for assertions on `evolve`.
   */
  then(expected: readonly (Event & { readonly personal?: PersonalValues })[]): State;
  /** The command was refused with a `PlatformError` of `kind`; returns the error for further assertions. */
  thenThrows(kind: ErrorKind): PlatformError;
  /** The command was accepted and changed nothing: no events. */
  thenNothingHappens(): void;
}

export interface DeciderSpec<State, Command, Event extends DomainEvent> {
  given(history: readonly Event[]): { when(command: Command): DeciderOutcome<State, Event> };
}

/**
 * Given/when/then for a decider: `deciderSpec(d).given(history).when(command).then(expectedEvents)`.
 * The history is checked against the event schemas too, so a malformed fixture fails loudly.
 */
export function deciderSpec<State, Command, Event extends DomainEvent>(
  decider: Decider<State, Command, Event>,
): DeciderSpec<State, Command, Event> {
  return {
    given(history) {
      assertSchemaValid(history, 'given');
      const state = fold(decider, decider.initialState, history);
      return {
        when(command) {
          const decide = (): readonly Event[] => decider.decide(command, state);
          return {
            then(expected) {
              const produced = decide();
              // Which values are personal is checked where the expected events say (`personal`), not everywhere.
              const compared = produced.map((event, index) => {
                if (expected[index]?.personal !== undefined || event.personal === undefined) return event;
                const { personal: _personal, ...rest } = event;
                return rest;
              });
              expect(compared).toStrictEqual(expected);
              assertSchemaValid(produced, 'produced');
              return fold(decider, state, produced);
            },
            thenThrows(kind) {
              let produced: readonly Event[];
              try {
                produced = decide();
              } catch (error) {
                expect(error).toBeInstanceOf(PlatformError);
                expect((error as PlatformError).kind).toBe(kind);
                return error as PlatformError;
              }
              throw new Error(
                `expected a ${kind} refusal, but the command produced ${JSON.stringify(produced)}`,
              );
            },
            thenNothingHappens() {
              expect(decide()).toEqual([]);
            },
          };
        },
      };
    },
  };
}

/** The OAuth error code (`invalid_grant`, …) a decision is refused with: OAuth deciders refuse in OAuth's words. */
export function oauthRefusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof OAuthError) return error.code;
    throw error;
  }
  throw new Error('the command was accepted');
}

// ---------------------------------------------------------------------------------------------------------
// Recorded events
// ---------------------------------------------------------------------------------------------------------

export const TEST_TENANT = 'acme';
export const TEST_ACTOR: Actor = { userId: 'user-1', credentialId: 'token-1' };
const FIRST_OCCURRED_AT = Date.parse('2030-01-01T00:00:00.000Z');

export interface RecordedEventOverrides {
  readonly tenant?: string;
  readonly actor?: Actor;
  readonly occurredAt?: string;
  readonly schemaVersion?: number;
}

/**
 * Builds RecordedEvents as a store would: revisions count per stream from 0, positions count globally from
 * 1, and each event occurs one second after the previous one. Events of known types are stored at their
 * current schema version and checked against it, unless an older `schemaVersion` is given (an event as an
 * older release stored it).
 */
export class EventLog {
  private lastPosition = 0n;
  private readonly revisions = new Map<string, bigint>();

  record<Type extends string, Data>(
    streamId: string,
    event: DomainEvent<Type, Data>,
    overrides: RecordedEventOverrides = {},
  ): RecordedEvent<Type, Data> {
    const current = isKnownEventType(event.type) ? schemaVersionOf(event.type) : 1;
    const schemaVersion = overrides.schemaVersion ?? current;
    if (isKnownEventType(event.type) && schemaVersion === current) assertSchemaValid([event], 'recorded');
    const position = ++this.lastPosition;
    const revision = this.revisions.has(streamId) ? this.revisions.get(streamId)! + 1n : 0n;
    this.revisions.set(streamId, revision);
    const commandId = uuidV5(`test-command-${position}`);
    const occurredAt =
      overrides.occurredAt ?? new Date(FIRST_OCCURRED_AT + Number(position) * 1000).toISOString();
    const metadata: EventMetadata = {
      tenant: overrides.tenant ?? TEST_TENANT,
      actor: overrides.actor ?? TEST_ACTOR,
      correlationId: commandId,
      causationId: commandId,
      commandId,
      occurredAt,
    };
    return {
      id: eventIdFor(metadata.tenant, commandId, 0),
      type: event.type,
      schemaVersion,
      data: event.data,
      metadata,
      streamId,
      revision,
      position,
      recordedAt: occurredAt,
    };
  }
}

// ---------------------------------------------------------------------------------------------------------
// Read models
// ---------------------------------------------------------------------------------------------------------

type JsonObject = Record<string, unknown>;

/**
 * A tiny in-memory read store: folds ReadModelChanges the way the adapters do. Each document keeps the
 * position of the change that last wrote it, and a change whose position is not newer is ignored; a patch
 * or delete of a missing document, or a copy of one, does nothing; a delete removes the document.
 */
export class InMemoryReadModels {
  private readonly collections = new Map<string, Map<string, { doc: Document; position: bigint }>>();

  apply(changes: readonly ReadModelChange[]): void {
    for (const change of changes) this.applyOne(change);
  }

  /** The documents of a collection, ordered by id. */
  documents(collection: string): Document[] {
    const entries = [...(this.collections.get(collection)?.values() ?? [])];
    return entries.map((entry) => structuredClone(entry.doc) as Document).sort(byId);
  }

  get(collection: string, id: string): Document | null {
    const entry = this.collections.get(collection)?.get(id);
    return entry ? (structuredClone(entry.doc) as Document) : null;
  }

  private applyOne(change: ReadModelChange): void {
    let documents = this.collections.get(change.collection);
    if (!documents) {
      documents = new Map();
      this.collections.set(change.collection, documents);
    }
    if (change.op === 'index') return;
    if (change.op === 'patchWhere') {
      for (const [id, stored] of documents) {
        const matches = Object.entries(change.where).every(([key, value]) => stored.doc[key] === value);
        if (matches && stored.position <= change.position) {
          documents.set(id, { doc: applyPatch(stored.doc, { set: change.set }), position: change.position });
        }
      }
      return;
    }
    const id = change.op === 'upsert' ? change.doc.id : change.id;
    const stored = documents.get(id);
    if (stored && stored.position >= change.position) return;
    switch (change.op) {
      case 'upsert':
        documents.set(id, { doc: structuredClone(change.doc), position: change.position });
        return;
      case 'delete':
        if (stored) documents.delete(id);
        return;
      case 'copy': {
        const source = this.collections.get(change.from.collection)?.get(change.from.id);
        if (!source) return;
        documents.set(id, { doc: copiedDocument(source.doc, change), position: change.position });
        return;
      }
      case 'patch':
        if (stored) documents.set(id, { doc: applyPatch(stored.doc, change), position: change.position });
        return;
    }
  }
}

function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------------------
// Projections
// ---------------------------------------------------------------------------------------------------------

export interface ProjectionOutcome {
  /** `project(event)` returned exactly `expected`. */
  then(expected: readonly ReadModelChange[]): void;
  /** After folding the changes of the history and of the event, `collection` holds exactly `expected`. */
  thenDocuments(collection: string, expected: readonly JsonObject[]): void;
  /** Folding the event's changes after the history leaves every collection as the history left it. */
  thenNothingChanges(): void;
}

export interface ProjectionSpec {
  given(history: readonly RecordedEvent[]): { when(event: RecordedEvent): ProjectionOutcome };
}

/**
 * Given/when/then for a projection: `projectionSpec(p).given(history).when(event).then(expectedChanges)`.
 * `collection` is the versioned-name function the projection receives (the base name by default). Events
 * go through `projectEvent`, as in the runner: stored older versions are upcast first.
 */
/** The documents of collection `name` after `projection` projected `events`, by id. */
export function documentsAfter(
  projection: Projection,
  events: readonly RecordedEvent[],
  name: string,
): readonly JsonObject[] {
  const readModels = new InMemoryReadModels();
  for (const event of events) readModels.apply(projectEvent(projection, event, (base) => base));
  return readModels.documents(name);
}

export function projectionSpec(
  projection: Projection,
  collection: (base: string) => string = (base) => base,
): ProjectionSpec {
  const project = (event: RecordedEvent): readonly ReadModelChange[] =>
    projectEvent(projection, event, collection);
  const readModelsAfter = (events: readonly RecordedEvent[]): InMemoryReadModels => {
    const readModels = new InMemoryReadModels();
    for (const event of events) readModels.apply(project(event));
    return readModels;
  };
  const allCollections = Object.keys(projection.collections).map(collection);
  return {
    given(history) {
      return {
        when(event) {
          return {
            then(expected) {
              expect(project(event)).toEqual(expected);
            },
            thenDocuments(name, expected) {
              expect(readModelsAfter([...history, event]).documents(name)).toEqual(
                [...expected].sort(byIdOf),
              );
            },
            thenNothingChanges() {
              const before = readModelsAfter(history);
              const after = readModelsAfter([...history, event]);
              for (const name of allCollections)
                expect(after.documents(name)).toEqual(before.documents(name));
            },
          };
        },
      };
    },
  };
}

function byIdOf(a: JsonObject, b: JsonObject): number {
  return byId({ id: String(a.id) }, { id: String(b.id) });
}
