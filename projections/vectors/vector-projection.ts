import { createHash } from 'node:crypto';
import type { RecordedEvent } from '../../contracts/events/envelope';
import type { StoreFilter } from '../../languages/filter/store-query';
import { READ_MODELS } from '../../contracts/read-models';
import {
  EmbeddingUnavailableError,
  MAX_EMBED_BATCH,
  type TextEmbedder,
} from '../../infra/ai/embeddings/port';
import type { EventStore, Subscription } from '../../infra/event-store/port';
import type { Logger } from '../../infra/logging';
import type { ReadModels } from '../../infra/read-store/read-models';
import {
  VectorIndexUnavailableError,
  type RecordVectors,
  type VectorIndex,
} from '../../infra/vector-index/port';
import { recordTexts, vectorIndexIdentity } from './record-text';

/** The vector projection's name: what `npm run replay` rebuilds, and what a read's `X-Min-Position` may wait for. */
export const VECTOR_PROJECTION = 'vectors';

export interface VectorProjectionDeps {
  readonly events: EventStore;
  readonly readModels: ReadModels;
  readonly index: VectorIndex;
  readonly embedder: TextEmbedder;
  /** Resolves once the records, fields and labels read models include `position`. */
  waitForReadModels(position: bigint): Promise<void>;
  readonly logger: Logger;
  /** Records embedded in one batch at most. */
  readonly batchRecords?: number;
}

/** How long the events may pause before the records waiting are embedded. */
const IDLE_FLUSH_MS = 20;
/** How long a failed batch waits before it is tried again, doubling up to a minute. */
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 60_000;
/**
 * How often a position with nothing embedded is saved: events of other categories move it at every page
 * read (a write each, on the thread that answers requests), and a restart from a position a second old reads
 * only those events again.
 */
const PASSING_CHECKPOINT_MS = 1000;

/** What a batch is to embed again: a record, or every record of a module or with a label (its text changed). */
type Pending =
  | { readonly kind: 'record'; readonly tenant: string; readonly recordId: number }
  | { readonly kind: 'module'; readonly tenant: string; readonly moduleId: number }
  | { readonly kind: 'label'; readonly tenant: string; readonly labelId: number };

/**
 * What an event changes of the texts: its record's (record events); every record of a module whose fields
 * were renamed, removed or reordered; every record with a label that was renamed or deleted.
 */
export function textChangeOf(event: RecordedEvent): Pending | null {
  const tenant = event.metadata.tenant;
  const data = event.data as { recordId?: unknown; moduleId?: unknown; labelId?: unknown; name?: unknown };
  if (typeof data.recordId === 'number') return { kind: 'record', tenant, recordId: data.recordId };
  const renamed = typeof data.name === 'string';
  if (
    typeof data.moduleId === 'number' &&
    ((event.type === 'FieldChanged' && renamed) ||
      event.type === 'FieldRemoved' ||
      event.type === 'FieldsOrdered')
  )
    return { kind: 'module', tenant, moduleId: data.moduleId };
  if (
    typeof data.labelId === 'number' &&
    ((event.type === 'LabelUpdated' && renamed) || event.type === 'LabelDeleted')
  )
    return { kind: 'label', tenant, labelId: data.labelId };
  return null;
}

function keyOf(change: Pending): string {
  return change.kind === 'record'
    ? `${change.tenant}.r${change.recordId}`
    : change.kind === 'module'
      ? `${change.tenant}.m${change.moduleId}`
      : `${change.tenant}.l${change.labelId}`;
}

/** The digest of a record's texts, kept with its vectors. */
function digestOf(texts: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify(texts)).digest('base64url');
}

/**
 * The vector projection: from the record events, each changed record's text (the recipe of
 * `record-text.ts`) embedded and written to the vector index, deleted records removed. Records are read from
 * the read models once these include the batch (so a batch sees its records as they stand), several records
 * embedded in one call, the index written with the batch's position, then the checkpoint saved. A batch that
 * fails (the model or the index's server is away) is tried again, later, until it passes, its checkpoint
 * unsaved: nothing is skipped.
 *
 * The index names the model and the recipe it was built with; when either differs at start, the index is
 * emptied and rebuilt from the first event, with progress in the log.
 */
export class VectorProjection {
  private subscription: Subscription | undefined;
  private running: Promise<void> | undefined;
  private stopping = false;
  private processed = 0n;
  private saved = { position: 0n, at: 0 };
  private written = 0;
  private readonly waiters: Array<{ position: bigint; resolve: () => void }> = [];
  private readonly batchRecords: number;

  constructor(private readonly deps: VectorProjectionDeps) {
    this.batchRecords = deps.batchRecords ?? 64;
  }

  /** What the index is made of: the model and the text recipe. */
  get identity(): string {
    return vectorIndexIdentity(this.deps.embedder.model);
  }

  /** The last event position the index includes. */
  get position(): bigint {
    return this.processed;
  }

  /** Records whose vectors this projection wrote or removed since it started. */
  get recordsWritten(): number {
    return this.written;
  }

  async start(): Promise<void> {
    const { index, logger } = this.deps;
    if ((await index.identity()) !== this.identity) {
      logger.info(
        { identity: this.identity },
        'vector index made another way: rebuilding it from the first event',
      );
      await index.reset(this.identity);
    }
    this.processed = await index.checkpoint();
    this.saved = { position: this.processed, at: Date.now() };
    this.subscription = this.deps.events.subscribeToAll({
      after: this.processed,
      filter: { categories: ['record', 'module', 'label'] },
    });
    this.running = this.consume(this.subscription).catch((error: unknown) =>
      logger.error({ err: error }, 'the vector projection stopped'),
    );
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.subscription?.close();
    await this.running;
    if (this.processed > this.saved.position)
      await this.saveCheckpoint(this.processed).catch((error: unknown) =>
        this.deps.logger.warn({ err: error }, "the vector projection's last position could not be saved"),
      );
  }

  /** Resolves once the index includes `position`, or false after `timeoutMs`. */
  waitFor(position: bigint, timeoutMs: number): Promise<boolean> {
    if (this.processed >= position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve(false);
      }, timeoutMs);
      const waiter = {
        position,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      this.waiters.push(waiter);
    });
  }

  private async consume(subscription: Subscription): Promise<void> {
    let pending = new Map<string, Pending>();
    let last = this.processed;
    const iterator = subscription[Symbol.asyncIterator]();
    let next = iterator.next();
    for (;;) {
      // With records waiting, a pause in the events flushes them (live events come one at a time).
      const item =
        pending.size === 0
          ? await next
          : await Promise.race([
              next,
              new Promise<'idle'>((resolve) => setTimeout(() => resolve('idle'), IDLE_FLUSH_MS)),
            ]);
      if (this.stopping) break;
      if (item !== 'idle') {
        if (item.done) break;
        next = iterator.next();
        const value = item.value;
        if (value.kind === 'event') {
          const change = textChangeOf(value.event);
          if (change !== null) pending.set(keyOf(change), change);
          last = value.event.position;
          if (pending.size < this.batchRecords) continue;
        } else if (value.position > last) {
          last = value.position;
        }
      }
      // A full batch, a pause, or the end of what there is for now.
      await this.flush([...pending.values()], last);
      pending = new Map();
    }
  }

  /** Embeds and writes one batch, trying again until it passes (or the projection stops). */
  private async flush(batch: readonly Pending[], position: bigint): Promise<void> {
    let delay = FIRST_RETRY_MS;
    for (;;) {
      try {
        if (batch.length > 0) await this.write(batch, position);
        if (batch.length > 0 || Date.now() - this.saved.at >= PASSING_CHECKPOINT_MS)
          await this.saveCheckpoint(position);
        this.advance(position);
        return;
      } catch (error) {
        if (this.stopping) return;
        this.deps.logger.warn(
          {
            err: error,
            records: batch.length,
            retryInMs: delay,
            unavailable:
              error instanceof EmbeddingUnavailableError || error instanceof VectorIndexUnavailableError,
          },
          'a batch of the vector projection failed; trying again',
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, MAX_RETRY_MS);
      }
    }
  }

  private async saveCheckpoint(position: bigint): Promise<void> {
    await this.deps.index.saveCheckpoint(position);
    this.saved = { position, at: Date.now() };
  }

  private advance(position: bigint): void {
    this.processed = position;
    for (let index = this.waiters.length - 1; index >= 0; index--) {
      const waiter = this.waiters[index]!;
      if (waiter.position <= position) {
        this.waiters.splice(index, 1);
        waiter.resolve();
      }
    }
  }

  private async write(batch: readonly Pending[], position: bigint): Promise<void> {
    await this.deps.waitForReadModels(position);
    const records = new Map<string, { tenant: string; recordId: number }>();
    for (const change of batch) {
      const recordIds =
        change.kind === 'record' ? [change.recordId] : await this.recordsAffected(change.tenant, change);
      for (const recordId of recordIds)
        records.set(`${change.tenant}.${recordId}`, { tenant: change.tenant, recordId });
    }
    // A module's or a label's records may be many: embedded a batch at a time.
    const all = [...records.values()];
    for (let start = 0; start < all.length; start += this.batchRecords)
      await this.writeRecords(all.slice(start, start + this.batchRecords), position);
  }

  /** The live records whose text a module or label change touches, read a page at a time. */
  private async recordsAffected(
    tenant: string,
    change: Exclude<Pending, { kind: 'record' }>,
  ): Promise<number[]> {
    const condition: StoreFilter =
      change.kind === 'module'
        ? { kind: 'compare', path: 'moduleId', op: 'eq', value: change.moduleId, numeric: true }
        : { kind: 'compare', path: `labels.${change.labelId}`, op: 'eq', value: true };
    const live: StoreFilter = {
      kind: 'and',
      children: [condition, { kind: 'compare', path: 'status', op: 'eq', value: 'live' }],
    };
    const ids: number[] = [];
    for await (const page of this.deps.readModels.idPages(tenant, READ_MODELS.records, 'recordId', live))
      ids.push(...page);
    return ids;
  }

  private async writeRecords(
    batch: ReadonlyArray<{ tenant: string; recordId: number }>,
    position: bigint,
  ): Promise<void> {
    const byTenant = new Map<string, number[]>();
    for (const { tenant, recordId } of batch)
      byTenant.set(tenant, [...(byTenant.get(tenant) ?? []), recordId]);
    const upserts: Array<Omit<RecordVectors, 'vectors'> & { texts: string[] }> = [];
    for (const [tenant, recordIds] of byTenant) {
      const texts = await this.textsOf(tenant, recordIds);
      const gone = recordIds.filter((recordId) => !texts.has(recordId));
      if (gone.length > 0) await this.deps.index.remove(tenant, gone, position);
      // A record whose text, space and module are what its vectors were made from needs none anew.
      const held = await this.deps.index.held(tenant, [...texts.keys()]);
      for (const [recordId, record] of texts) {
        const textHash = digestOf(record.texts);
        const before = held.get(recordId);
        if (
          before?.textHash === textHash &&
          before.spaceId === record.spaceId &&
          before.moduleId === record.moduleId
        )
          continue;
        upserts.push({ tenant, recordId, position, textHash, ...record });
      }
    }
    const allTexts = upserts.flatMap((record) => record.texts);
    const vectors: Float32Array[] = [];
    for (let start = 0; start < allTexts.length; start += MAX_EMBED_BATCH)
      vectors.push(...(await this.deps.embedder.embed(allTexts.slice(start, start + MAX_EMBED_BATCH))));
    let next = 0;
    await this.deps.index.upsert(
      upserts.map(({ texts, ...record }) => ({ ...record, vectors: texts.map(() => vectors[next++]!) })),
    );
    this.written += batch.length;
  }

  /** The texts of the live records among `recordIds`, with their space and module (deleted ones are absent). */
  private async textsOf(
    tenant: string,
    recordIds: readonly number[],
  ): Promise<Map<number, { spaceId: number; moduleId: number; texts: string[] }>> {
    const { readModels } = this.deps;
    const inList = (path: string, values: readonly number[]): StoreFilter => ({
      kind: 'in',
      path,
      values: [...values],
      numeric: true,
    });
    const records = (
      await readModels.find(tenant, READ_MODELS.records, {
        filter: inList('recordId', recordIds),
        limit: recordIds.length,
        withTotal: false,
      })
    ).items.filter((doc) => doc.status === 'live');
    const moduleIds = [...new Set(records.map((doc) => Number(doc.moduleId)))];
    const labelIds = [
      ...new Set(
        records.flatMap((doc) => Object.keys((doc.labels as Record<string, unknown>) ?? {}).map(Number)),
      ),
    ];
    const fields =
      moduleIds.length === 0
        ? []
        : (
            await readModels.find(tenant, READ_MODELS.fields, {
              filter: inList('moduleId', moduleIds),
              sort: [{ path: 'position', direction: 'asc' }],
              limit: 10_000,
              withTotal: false,
            })
          ).items;
    const labels =
      labelIds.length === 0
        ? []
        : (
            await readModels.find(tenant, READ_MODELS.labels, {
              filter: inList('labelId', labelIds),
              limit: labelIds.length,
              withTotal: false,
            })
          ).items;
    const labelNames = new Map(labels.map((doc) => [Number(doc.labelId), String(doc.name ?? '')]));
    const result = new Map<number, { spaceId: number; moduleId: number; texts: string[] }>();
    for (const doc of records) {
      const moduleId = Number(doc.moduleId);
      const texts = recordTexts({
        name: typeof doc.name === 'string' ? doc.name : '',
        fields: fields
          .filter((field) => Number(field.moduleId) === moduleId)
          .map((field) => ({ key: String(field.key), name: String(field.name), type: String(field.type) })),
        values: (doc.fields as Record<string, unknown>) ?? {},
        labels: Object.keys((doc.labels as Record<string, unknown>) ?? {}).map(
          (labelId) => labelNames.get(Number(labelId)) ?? '',
        ),
      });
      result.set(Number(doc.recordId), { spaceId: Number(doc.spaceId), moduleId, texts });
    }
    return result;
  }
}
