import { LRUCache } from 'lru-cache';
import { LatelyAdded } from './lately-added';
import { TwoGenerationCache } from './two-generations';
import { BroadcastChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { NewEvent, RecordedEvent } from '../../contracts/events/envelope';
import { ERASED_VALUE, ERASURE_EVENT_TYPES, mapStrings, withValuesAt } from '../../contracts/personal-data';
import { z } from 'zod';
import {
  DATA_KEY_BYTES,
  DATA_KEY_ID,
  DATA_KEY_SUBJECT,
  erasedSubject,
  type DataKey,
  type DataKeyStore,
} from '../keys/port';
import {
  isSealedValue,
  jsonOf,
  looksSealed,
  subjectValues,
  type SubjectValues,
} from '../secrets/personal-values';
import type {
  AppendOptions,
  AppendResult,
  EventStore,
  ReadAllOptions,
  ReadStreamOptions,
  StreamAppend,
  StreamAppendOutcome,
  SubscribeOptions,
  Subscription,
  SubscriptionItem,
} from './port';

export interface PersonalDataOptions {
  /** How long a key read from the store is used before it is read again (another process may erase it). */
  readonly keyCacheMs?: number;
  readonly maxCachedKeys?: number;
  /**
   * The name of a channel the stores of this process's threads that use the same data keys share
   * (`keyChannelName`): a key one makes or reads to seal is handed to the others, which read the events sealed
   * under it a moment later (the projections thread reads every record created on the main thread), and an
   * erasure here reaches them at once rather than when they read its event.
   */
  readonly keyChannel?: string;
}

/**
 * What a store tells the others on its channel: keys, the n-th subject's under the n-th key id, its 32 bytes
 * the n-th of `keys` (one buffer for all: a bulk create shares a thousand, and a buffer each costs more to
 * send and take than the key's sealing), subjects erased, and (`values`) the values it sealed, each as sealed
 * and as the JSON sealed, with its subject. Checked as it arrives, as anything a thread is handed: a message
 * of another shape (another version of the platform in the process, a stray sender on the name) is ignored,
 * never taken for a key.
 */
const SHARED_KEYS = z
  .object({
    subjects: z.array(z.string().regex(DATA_KEY_SUBJECT)),
    ids: z.array(z.string().regex(DATA_KEY_ID)),
    keys: z.instanceof(Uint8Array),
    erased: z.array(z.string().regex(DATA_KEY_SUBJECT)),
    values: z
      .object({ sealed: z.array(z.string()), json: z.array(z.string()), subjects: z.array(z.string()) })
      .refine(
        (values) =>
          values.json.length === values.sealed.length && values.subjects.length === values.sealed.length,
      )
      .optional(),
  })
  .refine(
    (shared) =>
      shared.ids.length === shared.subjects.length &&
      shared.keys.byteLength === shared.subjects.length * DATA_KEY_BYTES,
  );
type SharedKeys = z.infer<typeof SHARED_KEYS>;

/** What is shared next, before it is sent: the keys as they are cached (packed into one buffer when sent). */
interface ToShare {
  readonly subjects: string[];
  readonly ids: string[];
  readonly keys: Buffer[];
  readonly erased: string[];
  readonly values: { readonly sealed: string[]; readonly json: string[]; readonly subjects: string[] };
}

/** A value sealed lately, by this thread's store or another's: its subject and the JSON sealed. */
interface SealedValue {
  readonly subject: string;
  readonly json: string;
}

type KnownKey = DataKey | 'erased';

/** A subject's key as this store caches it, with its values' sealing made once it is used. */
interface CachedKey {
  readonly key: KnownKey;
  readonly until: number;
  values?: SubjectValues;
}

/**
 * How many events a read reads ahead to look their subjects' keys up together: a store caching fewer keys than
 * twice this would drop keys it read for a batch before the batch is opened.
 */
export const READ_AHEAD = 256;
/**
 * The most keys an append's sealing reads or makes that the store keeps (`cached`): those of a larger append (a
 * bulk create makes a thousand) seal it and are not kept, as a cache resists a scan. The thread that made them
 * seldom reads them again soon (the projections thread does, and is sent them on the channel); kept, they would
 * push out keys that are read, and keeping them cost about 3 µs a record (appends of 1,000 new records: 40.7 µs
 * of CPU an event, 37.9 without; medians of four runs each).
 */
export const KEPT_KEYS_PER_APPEND = 64;
/** How many events the subscriptions of a store share opened (they read the same events at about once). */
const SHARED_OPENED = 1024;
/**
 * How many of the values other threads sealed lately a store keeps for its readers, and how many characters
 * they may hold in all: the projections thread reads the records a bulk create writes tens of thousands of
 * events after their values were sealed when the machine is busy, each subscription at its own pace.
 */
const SEALED_ELSEWHERE = 32_768;
const SEALED_ELSEWHERE_CHARACTERS = 8 * 1024 * 1024;
/**
 * The longest JSON of a value kept as sealed lately (`sealedHere`, `sealedElsewhere`), in characters: names and
 * fields, not the bodies and bundles hooks receive (megabytes each, opened when read).
 */
const SEALED_LATELY_MAX_JSON = 4096;

/** What a value sealed lately holds, in characters, as the caches of them count. */
function sealedValueLength(value: SealedValue, sealed: string): number {
  return value.json.length + sealed.length;
}

/**
 * Whether `value` may hold a sealed value (a string that starts as one): events that hold none pass at once.
 * Walked with `for…in` rather than `Object.values`, which makes an array for every object of every event read
 * (JSON has no inherited keys).
 */
function mayHoldSealedValue(value: unknown): boolean {
  if (typeof value === 'string') return looksSealed(value);
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(mayHoldSealedValue);
  const object = value as Record<string, unknown>;
  for (const key in object) if (mayHoldSealedValue(object[key])) return true;
  return false;
}

/** `json` parsed, or undefined when it is not JSON (a value shared on the channel is opened instead). */
function parsedJson(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A subscription's item of `event`. Declared here, not as a closure where it is used: the TypeScript loader
 * (tsx) keeps function names, so a named closure costs a `defineProperty` each time it is made, which for
 * every item of every subscription cost more than opening the event.
 */
function eventItem(event: RecordedEvent): IteratorResult<SubscriptionItem> {
  return { done: false, value: { kind: 'event', event } };
}

/** An event a read hands on (`revealing`), as `eventItem` for a subscription. */
function readResult(event: RecordedEvent): IteratorResult<RecordedEvent> {
  return { done: false, value: event };
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/** Events in pages of `READ_AHEAD`, for a store that reads no pages of its own (`readAllPages`). */
async function* inPages(events: AsyncIterable<RecordedEvent>): AsyncIterable<readonly RecordedEvent[]> {
  let page: RecordedEvent[] = [];
  for await (const event of events) {
    page.push(event);
    if (page.length < READ_AHEAD) continue;
    yield page;
    page = [];
  }
  if (page.length > 0) yield page;
}

/**
 * The event store as the platform's code uses it: personal values are sealed under their subject's data key
 * on the way in (as each event's `sealing` says) and opened on the way out, so the log, and the stream the
 * relay copies from it (`sealed`), hold only ciphertext. A value whose subject was erased reads as
 * `ERASED_VALUE` in every event, whoever reads it and however long after.
 */
export class PersonalDataEventStore implements EventStore {
  readonly categoryHead?: EventStore['categoryHead'];
  private readonly keyCacheMs: number;
  private readonly cached: TwoGenerationCache<string, CachedKey>;
  /** Key reads under way: the subscriptions that meet a new subject at once share one read. */
  private readonly reading = new Map<string, Promise<KnownKey>>();
  /** Events lately opened for a subscription, by id: the others that read them take them as opened. */
  private readonly opened = new LatelyAdded<
    string,
    { subject: string; event: RecordedEvent | Promise<RecordedEvent> }
  >(SHARED_OPENED);
  /**
   * Values this store sealed lately, by their sealed text (a random nonce in each): a reader of this thread
   * that meets one (the integrator, reading the stream) takes the JSON sealed rather than opening it, while its
   * subject's key (cached, or looked up again) is live: another process may have erased it since.
   */
  private readonly sealedHere = new TwoGenerationCache<string, SealedValue>(SHARED_OPENED);
  /**
   * Values the stores of other threads sealed lately and shared, as `sealedHere`: what the projections thread
   * would otherwise open, for every value of every record the main thread writes, in every subscription that
   * reads it beyond the events they share opened (`opened`).
   */
  private readonly sealedElsewhere = new LRUCache<string, SealedValue>({
    max: SEALED_ELSEWHERE,
    maxSize: SEALED_ELSEWHERE_CHARACTERS,
    sizeCalculation: sealedValueLength,
  });

  /** Unset once the store is closed. */
  private channel?: BroadcastChannel;
  /** What this store tells the other threads next (`flushShared`). */
  private toShare: ToShare | undefined;

  constructor(
    /** The store itself: events as stored, sealed (the relay publishes these). */
    readonly sealed: EventStore,
    private readonly keys: DataKeyStore,
    options: PersonalDataOptions = {},
  ) {
    this.keyCacheMs = options.keyCacheMs ?? 30_000;
    this.cached = new TwoGenerationCache(options.maxCachedKeys ?? 50_000);
    const categoryHead = sealed.categoryHead?.bind(sealed);
    if (categoryHead) this.categoryHead = categoryHead;
    if (options.keyChannel !== undefined) {
      const channel = new BroadcastChannel(options.keyChannel);
      // The process may end while it is open.
      channel.unref();
      channel.onmessage = (message) => {
        this.takeShared((message as { data: unknown }).data);
      };
      this.channel = channel;
    }
  }

  async append(
    streamId: string,
    events: readonly NewEvent[],
    options?: AppendOptions,
  ): Promise<AppendResult> {
    const keys = await this.keysToSeal(events);
    const sealed = events.map((event) => this.seal(event, keys));
    this.flushShared();
    return this.sealed.append(streamId, sealed, options);
  }

  /** The keys of all the appends are read or made at once; an append that cannot be sealed fails alone. */
  async appendToStreams(appends: readonly StreamAppend[]): Promise<StreamAppendOutcome[]> {
    let keys: Map<string, KnownKey> | undefined;
    let keysFailed: unknown;
    try {
      keys = await this.keysToSeal(appends.flatMap((append) => append.events));
    } catch (error) {
      keysFailed = error;
    }
    const sealing = appends.map((append): { events: NewEvent[] } | { error: unknown } => {
      if (keys === undefined) return { error: keysFailed };
      try {
        return { events: append.events.map((event) => this.seal(event, keys)) };
      } catch (error) {
        return { error };
      }
    });
    const ready: StreamAppend[] = [];
    sealing.forEach((outcome, index) => {
      if ('events' in outcome) ready.push({ ...appends[index]!, events: outcome.events });
    });
    this.flushShared();
    const appended = ready.length > 0 ? await this.sealed.appendToStreams(ready) : [];
    let next = 0;
    return sealing.map((outcome) =>
      'error' in outcome ? { ok: false, error: outcome.error } : appended[next++]!,
    );
  }

  readStream(streamId: string, options?: ReadStreamOptions): AsyncIterable<RecordedEvent> {
    return this.revealing(inPages(this.sealed.readStream(streamId, options)));
  }

  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent> {
    return this.revealing(this.sealed.readAllPages?.(options) ?? inPages(this.sealed.readAll(options)));
  }

  subscribeToAll(options?: SubscribeOptions): Subscription {
    const subscription = this.sealed.subscribeToAll(options);
    return {
      close: () => subscription.close(),
      // Not an async generator: its every item costs several promises, for every event of every subscription
      // (the projections thread runs a dozen), and an event opened already is handed on without one.
      [Symbol.asyncIterator]: () => {
        const items = subscription[Symbol.asyncIterator]();
        return {
          next: () => items.next().then((item) => this.revealedItem(item)),
          return: async (value?: unknown) =>
            (await items.return?.(value)) ?? { done: true, value: undefined },
        };
      },
    };
  }

  /** A subscription's item with its event opened (`revealShared`). */
  private revealedItem(
    item: IteratorResult<SubscriptionItem>,
  ): IteratorResult<SubscriptionItem> | Promise<IteratorResult<SubscriptionItem>> {
    if (item.done === true || item.value.kind !== 'event') return item;
    const revealed = this.revealShared(item.value.event);
    if (revealed === item.value.event) return item;
    return revealed instanceof Promise ? revealed.then(eventItem) : eventItem(revealed);
  }

  headPosition(): Promise<bigint> {
    return this.sealed.headPosition();
  }

  onAfterCommit(hook: Parameters<EventStore['onAfterCommit']>[0]): () => void {
    return this.sealed.onAfterCommit(hook);
  }

  async close(): Promise<void> {
    this.flushShared();
    this.channel?.close();
    this.channel = undefined;
    await this.sealed.close();
    await this.keys.close();
  }

  /**
   * The event with its personal values opened, or `ERASED_VALUE` where the subject was erased (for events read
   * elsewhere than from this store: a stream's messages). An event that is not its subject's own sealed value
   * (a user's text shaped like one) is left as it is.
   */
  async reveal(event: RecordedEvent): Promise<RecordedEvent> {
    return this.revealNow(event) ?? this.revealRead(event);
  }

  /** As `reveal`, for an event with sealed values whose subject's key is not cached: the key is read. */
  private async revealRead(event: RecordedEvent): Promise<RecordedEvent> {
    const subject = event.metadata.subject!;
    return this.revealWith(event, subject, await this.keyOf(subject));
  }

  /** As `reveal`, at once when no key has to be read for it (undefined when one has). */
  private revealNow(event: RecordedEvent): RecordedEvent | undefined {
    const subject = event.metadata.subject;
    if (subject === undefined) return event;
    if (ERASURE_EVENT_TYPES.has(event.type)) {
      this.remember(subject, 'erased');
      return event;
    }
    if (!mayHoldSealedValue(event.data)) return event;
    const known = this.fresh(subject);
    return known === undefined ? undefined : this.revealWith(event, subject, known);
  }

  /** The event (holding sealed values of `subject`) opened under `known`, or erased. */
  private revealWith(event: RecordedEvent, subject: string, known: KnownKey): RecordedEvent {
    const data = this.openWith(event.data, subject, known);
    return data === event.data ? event : { ...event, data };
  }

  /**
   * As `reveal`, the event opened once for every subscription of this store: the projections of a process
   * each subscribe, and most of them read every record's events. An erasure read drops its subject's.
   */
  private revealShared(event: RecordedEvent): RecordedEvent | Promise<RecordedEvent> {
    const subject = event.metadata.subject;
    if (subject === undefined) return event;
    if (ERASURE_EVENT_TYPES.has(event.type)) {
      this.forgetOpened(subject);
      return this.revealNow(event)!;
    }
    const known = this.opened.get(event.id);
    if (known !== undefined) return known.event;
    const revealed = this.revealNow(event) ?? this.revealRead(event);
    this.opened.set(event.id, { subject, event: revealed });
    // A failed opening is not kept: the next reader tries again.
    if (revealed instanceof Promise) revealed.catch(() => this.opened.delete(event.id));
    return revealed;
  }

  /**
   * `data` (any JSON, from an event of `subject`'s) with its sealed values opened, or erased. `fresh`: the key
   * is read from the key store now, for what leaves the platform (a delivery another replica's erasure a moment
   * ago must already find erased), by a read of its own: not from the cache, or a read begun before it.
   */
  async revealData(data: unknown, subject: string, options: { fresh?: boolean } = {}): Promise<unknown> {
    if (!mayHoldSealedValue(data)) return data;
    return this.openWith(data, subject, await this.keyOf(subject, options));
  }

  /**
   * `data` of `subject`'s with its sealed values opened under `known`, or erased. A value sealed lately in this
   * process (`sealedHere`, `sealedElsewhere`) is taken as it was sealed: the same text cannot be made again (its
   * nonce is random), and it is its subject's.
   */
  private openWith(data: unknown, subject: string, known: KnownKey): unknown {
    if (known === 'erased') return mapStrings(data, (text) => (isSealedValue(text) ? ERASED_VALUE : text));
    let values: SubjectValues | undefined;
    return mapStrings(data, (text) => {
      if (!looksSealed(text)) return text;
      const lately = this.sealedLately(text);
      if (lately?.subject === subject) {
        const value = parsedJson(lately.json);
        if (value !== undefined) return value;
      }
      return (values ??= this.valuesOf(subject, known)).open(text);
    });
  }

  /**
   * The value sealed lately in this process as `sealed`, if any. Stores that seal nothing and hear of nothing
   * (a rebuild's decoder threads) skip the lookups, each of which hashes the whole sealed text.
   */
  private sealedLately(sealed: string): SealedValue | undefined {
    return (
      (this.sealedHere.size > 0 ? this.sealedHere.get(sealed) : undefined) ??
      (this.sealedElsewhere.size > 0 ? this.sealedElsewhere.get(sealed) : undefined)
    );
  }

  /**
   * Destroys the subject's key: from now on its values read as erased here at once, and in other processes
   * once their cached key expires (`keyCacheMs`) or they read the erasure's event. Whether this call erased it.
   */
  async erase(subject: string, erasedAt: number): Promise<boolean> {
    const erased = await this.keys.destroy(subject, erasedAt);
    this.remember(subject, 'erased');
    this.forgetOpened(subject);
    // At once: the other threads' next reads find it waiting.
    this.toShareNext()?.erased.push(subject);
    this.flushShared();
    return erased;
  }

  /**
   * What is told to the other threads next (none without a channel): sent with the events' append (before it,
   * so the keys arrive before the wake-up the commit sends them), or at the end of this turn.
   */
  private toShareNext(): ToShare | undefined {
    if (this.channel === undefined) return undefined;
    if (this.toShare === undefined) {
      this.toShare = {
        subjects: [],
        ids: [],
        keys: [],
        erased: [],
        values: { sealed: [], json: [], subjects: [] },
      };
      setImmediate(() => this.flushShared());
    }
    return this.toShare;
  }

  /**
   * Takes what the other threads shared and this thread has not handled yet: a key shared before its events
   * were committed is here before they are read, though its message may wait behind the wake-up.
   */
  private takeWaitingShared(): void {
    if (this.channel === undefined) return;
    // Node reads a BroadcastChannel as it reads a MessagePort here (its documentation names both); its
    // typings name only the port.
    const channel = this.channel as unknown as MessagePort;
    for (let waiting = receiveMessageOnPort(channel); waiting; waiting = receiveMessageOnPort(channel))
      this.takeShared(waiting.message);
  }

  private flushShared(): void {
    const shared = this.toShare;
    this.toShare = undefined;
    if (shared === undefined) return;
    const { subjects, ids, erased, values } = shared;
    // Appends whose keys were cached and whose values are large have nothing to tell.
    if (subjects.length === 0 && erased.length === 0 && values.sealed.length === 0) return;
    // A buffer of their own: a key's Buffer may be a view into a pool shared with other buffers, and a view is
    // sent with all of its buffer.
    const keys = new Uint8Array(shared.keys.length * DATA_KEY_BYTES);
    shared.keys.forEach((key, index) => keys.set(key, index * DATA_KEY_BYTES));
    this.channel?.postMessage({ subjects, ids, keys, erased, values } satisfies SharedKeys);
  }

  /**
   * Keys, erasures and sealed values another thread's store shared (anything else on the channel is ignored):
   * an erasure known here is never undone by a key.
   */
  private takeShared(message: unknown): void {
    const shared = SHARED_KEYS.safeParse(message);
    if (!shared.success) return;
    const values = shared.data.values;
    values?.sealed.forEach((sealed, index) =>
      this.sealedElsewhere.set(sealed, { subject: values.subjects[index]!, json: values.json[index]! }),
    );
    for (const subject of shared.data.erased) {
      this.remember(subject, 'erased');
      this.forgetOpened(subject);
    }
    const { subjects, ids } = shared.data;
    const keys = Buffer.from(
      shared.data.keys.buffer,
      shared.data.keys.byteOffset,
      shared.data.keys.byteLength,
    );
    subjects.forEach((subject, index) => {
      // Copied out (into Node's pool), so that a key kept does not keep the whole message's buffer.
      const key = Buffer.allocUnsafe(DATA_KEY_BYTES);
      keys.copy(key, 0, index * DATA_KEY_BYTES, (index + 1) * DATA_KEY_BYTES);
      this.remember(subject, { id: ids[index]!, key });
    });
  }

  /** Drops what this store keeps opened of the subject's: its events, and values sealed lately. */
  private forgetOpened(subject: string): void {
    for (const cache of [this.opened, this.sealedHere, this.sealedElsewhere]) {
      const keys = [...cache.entries()].filter(([, entry]) => entry.subject === subject).map(([key]) => key);
      for (const key of keys) cache.delete(key);
    }
  }

  /** The event with its personal values sealed under its subject's key in `keys` (`keysToSeal`). */
  private seal(event: NewEvent, keys: ReadonlyMap<string, KnownKey>): NewEvent {
    const { sealing, ...stored } = event;
    if (!sealing) return stored;
    const metadata = { ...stored.metadata, subject: sealing.subject };
    if (sealing.paths.length === 0) return { ...stored, metadata };
    const key = keys.get(sealing.subject);
    if (key === undefined) throw new Error(`no data key was read for ${sealing.subject}`);
    if (key === 'erased') throw erasedSubject(sealing.subject);
    const { subject } = sealing;
    const values = this.valuesOf(subject, key);
    const shared = this.toShareNext()?.values;
    const data = withValuesAt(stored.data, sealing.paths, (value) => {
      const json = jsonOf(value);
      const sealed = values.sealJson(json);
      if (json.length <= SEALED_LATELY_MAX_JSON) {
        this.sealedHere.set(sealed, { subject, json });
        shared?.sealed.push(sealed);
        shared?.json.push(json);
        shared?.subjects.push(subject);
      }
      return sealed;
    });
    return { ...stored, data, metadata };
  }

  /**
   * The keys to seal the events' values with, by subject, those not cached read or made in one call: a key is
   * made on a subject's first use, and an erased subject answers `erased` (nothing more is sealed for it).
   */
  private async keysToSeal(events: readonly NewEvent[]): Promise<Map<string, KnownKey>> {
    const keys = new Map<string, KnownKey>();
    const missing = new Set<string>();
    for (const { sealing } of events) {
      if (sealing === undefined || sealing.paths.length === 0) continue;
      const { subject } = sealing;
      if (keys.has(subject) || missing.has(subject)) continue;
      const known = this.fresh(subject);
      if (known === undefined) missing.add(subject);
      else keys.set(subject, known);
    }
    if (missing.size === 0) return keys;
    const found = await this.keys.keysFor([...missing]);
    const toShare = this.toShareNext();
    const kept = missing.size <= KEPT_KEYS_PER_APPEND;
    for (const subject of missing) {
      const answered = found.get(subject);
      if (answered === undefined) throw new Error(`the data key store did not answer for ${subject}`);
      // Erased while it was made or read: the erasure stands.
      const key = this.remember(subject, answered, { keep: kept });
      keys.set(subject, key);
      if (key !== 'erased' && toShare) {
        toShare.subjects.push(subject);
        toShare.ids.push(key.id);
        toShare.keys.push(key.key);
      }
    }
    return keys;
  }

  /**
   * The key to open the subject's values: a subject without a key (none was ever made) reads as erased.
   * `fresh`: read from the key store by a read of its own (an erasure known here still stands).
   */
  private async keyOf(subject: string, options: { fresh?: boolean } = {}): Promise<KnownKey> {
    let known = this.fresh(subject);
    if (known === 'erased' || (known !== undefined && options.fresh !== true)) return known;
    if (options.fresh !== true) {
      this.takeWaitingShared();
      known = this.fresh(subject);
      if (known !== undefined) return known;
      const under = this.reading.get(subject);
      if (under !== undefined) return under;
    }
    const reading: Promise<KnownKey> = this.keys
      .existing([subject])
      // Erased while it was read: the erasure stands.
      .then((keys) => this.remember(subject, keys.get(subject) ?? 'erased'))
      .finally(() => {
        // A fresh read begun meanwhile took its place: the readers after it wait for that one.
        if (this.reading.get(subject) === reading) this.reading.delete(subject);
      });
    this.reading.set(subject, reading);
    return reading;
  }

  /** The sealing of the subject's values under `key`, kept with the key while the key is cached. */
  private valuesOf(subject: string, key: DataKey): SubjectValues {
    const entry = this.cached.peek(subject);
    if (entry?.key !== key) return subjectValues(key, subject);
    return (entry.values ??= subjectValues(key, subject));
  }

  private fresh(subject: string): KnownKey | undefined {
    const entry = this.cached.get(subject);
    if (entry === undefined) return undefined;
    // An erased subject stays erased: only a live key is read again.
    if (entry.key !== 'erased' && entry.until < Date.now()) {
      this.cached.delete(subject);
      return undefined;
    }
    return entry.key;
  }

  /**
   * Caches what is known of the subject's key, and answers what is known now: an erasure known here is never
   * undone by a key (read, made or shared while it was done). `keep: false` (a bulk append's keys) caches an
   * erasure only.
   */
  private remember(subject: string, key: KnownKey, { keep = true } = {}): KnownKey {
    if (key !== 'erased' && this.cached.peek(subject)?.key === 'erased') return 'erased';
    if (keep || key === 'erased') this.cached.set(subject, { key, until: Date.now() + this.keyCacheMs });
    return key;
  }

  /**
   * The events of the pages opened. The keys of the subjects up to `READ_AHEAD` events meet are read in one
   * query before they are opened, not one per subject (a rebuild meets a new record every other event).
   */
  private revealing(pages: AsyncIterable<readonly RecordedEvent[]>): AsyncIterable<RecordedEvent> {
    return { [Symbol.asyncIterator]: () => this.revealingFrom(pages[Symbol.asyncIterator]()) };
  }

  /**
   * `revealing`'s iterator. Not an async generator: each item of one waits a turn more than an iterator's
   * does, for every event a rebuild reads, and an event opened at once is handed on settled.
   */
  private revealingFrom(pages: AsyncIterator<readonly RecordedEvent[]>): AsyncIterator<RecordedEvent> {
    let page: readonly RecordedEvent[] = [];
    let taken = 0;
    /** The events of the page before this index have had their keys read. */
    let keysRead = 0;
    let ended = false;
    const next = (): Promise<IteratorResult<RecordedEvent>> => {
      if (taken < keysRead) {
        const event = page[taken++]!;
        const revealed = this.revealNow(event);
        return revealed === undefined
          ? this.revealRead(event).then(readResult)
          : Promise.resolve(readResult(revealed));
      }
      if (taken < page.length) {
        const upTo = Math.min(page.length, taken + READ_AHEAD);
        return this.readKeysOf(page, taken, upTo).then(() => {
          keysRead = upTo;
          return next();
        });
      }
      if (ended) return Promise.resolve(DONE);
      return pages.next().then((item) => {
        if (item.done === true) ended = true;
        else [page, taken, keysRead] = [item.value, 0, 0];
        return next();
      });
    };
    return {
      next,
      return: async () => {
        [page, taken, keysRead, ended] = [[], 0, 0, true];
        await pages.return?.();
        return DONE;
      },
    };
  }

  /**
   * Caches the keys of the subjects whose sealed values the events `from` up to `upTo` hold, not cached yet, in
   * one query.
   */
  private async readKeysOf(events: readonly RecordedEvent[], from: number, upTo: number): Promise<void> {
    this.takeWaitingShared();
    const subjects = new Set<string>();
    for (let index = from; index < upTo; index++) {
      const event = events[index]!;
      const subject = event.metadata.subject;
      if (subject === undefined || subjects.has(subject) || ERASURE_EVENT_TYPES.has(event.type)) continue;
      if (this.fresh(subject) === undefined && mayHoldSealedValue(event.data)) subjects.add(subject);
    }
    if (subjects.size < 2) return;
    const keys = await this.keys.existing([...subjects]);
    for (const subject of subjects) this.remember(subject, keys.get(subject) ?? 'erased');
  }
}
