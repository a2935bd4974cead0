import {
  QdrantClient,
  QdrantClientResourceExhaustedError,
  QdrantClientTimeoutError,
  type Schemas,
} from '@qdrant/js-client-rest';
import { createHash } from 'node:crypto';
import {
  checkDimensions,
  checkQueryDimension,
  type HeldRecord,
  type RecordVectors,
  type VectorHit,
  type VectorIndex,
  type VectorQuery,
  VectorIndexUnavailableError,
} from './port';

/** The collection that holds the index's identity and checkpoint (one point, a vector of one dimension). */
const META_COLLECTION = 'records_platform_vector_meta';
const META_POINT = 1;

/** How many times a reset makes its collection, other processes' resets deleting it meanwhile. */
const MAX_RESET_ATTEMPTS = 5;
/** What making a collection's indexes answers when another process's reset deletes the collection meanwhile. */
const RESET_RACE_STATUSES = new Set([404, 500]);

/** Answers of a server that cannot serve now (or of a proxy in front of it that cannot reach it). */
const UNAVAILABLE_STATUSES = new Set([502, 503, 504]);

export interface QdrantOptions {
  readonly apiKey?: string;
  /**
   * Put before every collection's name, so that deployments (or test runs) sharing one server keep apart;
   * empty: the names as they always were.
   */
  readonly collectionPrefix?: string;
  /** The longest a call may wait for the server's answer (the client's own default is 5 minutes). */
  readonly timeoutMs?: number;
}

/** How long a call waits for the server by default: a server that hangs holds no search longer. */
const DEFAULT_TIMEOUT_MS = 30_000;

/** The HTTP status of a Qdrant answer the client rejected (its `ApiError` carries one), if it is one. */
function statusOf(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'status' in error && typeof error.status === 'number'
    ? error.status
    : undefined;
}

/**
 * Why no answer came, when none did: fetch rejects with a TypeError "fetch failed", the reason (refused, reset,
 * no such host) in its `cause`, or is aborted at the client's timeout. Recognised by name and message, as it may come from another realm than this
 * code's (a test runner's sandbox), where `instanceof TypeError` is false.
 */
function unansweredReason(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('name' in error) || !('message' in error))
    return undefined;
  // The client's timeout aborts the fetch (a DOMException, whichever realm).
  if (error.name === 'AbortError' || error.name === 'TimeoutError') return 'no answer within the timeout';
  if (error.name !== 'TypeError' || error.message !== 'fetch failed') return undefined;
  const cause = 'cause' in error ? error.cause : undefined;
  return typeof cause === 'object' &&
    cause !== null &&
    'message' in cause &&
    typeof cause.message === 'string'
    ? cause.message
    : 'fetch failed';
}

/** A failure of the server or the way to it, as the port's unavailable error; any other as it was. */
function translated(error: unknown): unknown {
  const status = statusOf(error);
  const unanswered = unansweredReason(error);
  if (
    unanswered === undefined &&
    !(error instanceof QdrantClientTimeoutError) &&
    !(error instanceof QdrantClientResourceExhaustedError) &&
    !(status !== undefined && UNAVAILABLE_STATUSES.has(status))
  )
    return error;
  const reason = unanswered ?? (error instanceof Error ? error.message : String(error));
  return new VectorIndexUnavailableError(`Qdrant did not answer: ${reason}`, { cause: error });
}

type Filter = Schemas['Filter'];
type Condition = Schemas['FieldCondition'];

/** A point id Qdrant takes (a UUID), the same for the same name every time. */
function pointId(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

const headId = (tenant: string, recordId: number) => pointId(`${tenant}/${recordId}/head`);
const chunkId = (tenant: string, recordId: number, chunk: number) =>
  pointId(`${tenant}/${recordId}/${chunk}`);
const spaceKey = (tenant: string, spaceId: number) => `${tenant}/${spaceId}`;
const match = (key: string, value: string | number | boolean): Condition => ({ key, match: { value } });

interface HeadPayload {
  readonly kind: 'head';
  readonly position: string;
  readonly chunks: number;
  readonly space: string;
  readonly module_id?: number;
  readonly text_hash?: string | null;
}

/**
 * The vector index on Qdrant: one collection per model, dimension and text recipe (named by their hash),
 * cosine distance, the system and space as a tenant payload index. A record has one point per chunk and a
 * head point (never searched: a placeholder vector) holding its position, so that an older write or a removal
 * is recognised as on the embedded index. A record scores by its best chunk, whichever the order.
 */
export class QdrantVectorIndex implements VectorIndex {
  private collection: string | undefined;
  private checkedAt = 0;
  private readonly metaCollection: string;

  private constructor(
    private readonly client: QdrantClient,
    readonly dimension: number,
    private readonly prefix: string,
  ) {
    this.metaCollection = `${prefix}${META_COLLECTION}`;
  }

  static async open(url: string, dimension: number, options: QdrantOptions = {}): Promise<QdrantVectorIndex> {
    const client = new QdrantClient({
      url,
      ...(options.apiKey !== undefined && { apiKey: options.apiKey }),
      timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      // Its check only warns on the console; the contract suite checks this client against the server CI runs.
      checkCompatibility: false,
    });
    const index = new QdrantVectorIndex(client, dimension, options.collectionPrefix ?? '');
    await index.createCollection(index.metaCollection, { vectors: { size: 1, distance: 'Dot' } });
    const identity = await index.identity();
    if (identity !== null) index.collection = index.collectionFor(identity);
    return index;
  }

  async identity(): Promise<string | null> {
    return ((await this.meta())?.identity as string | undefined) ?? null;
  }

  async reset(identity: string): Promise<void> {
    const name = this.collectionFor(identity);
    // Deleting a collection that is not there answers false, not an error.
    await this.request((client) => client.deleteCollection(name));
    // Another process resetting at the same moment may delete the collection this one has just made (its own
    // delete came first): this one then makes it again, a few times at most. Qdrant answers an index made on a
    // collection deleted meanwhile with 404, or with 500 when the delete came during the index's build.
    for (let attempt = 1; ; attempt++)
      try {
        await this.createIndexedCollection(name);
        break;
      } catch (error) {
        if (!RESET_RACE_STATUSES.has(statusOf(error) ?? 0) || attempt === MAX_RESET_ATTEMPTS) throw error;
      }
    const previous = this.collection;
    this.collection = name;
    this.checkedAt = Date.now();
    await this.writeMeta({ identity, checkpoint: '0' });
    if (previous !== undefined && previous !== name)
      await this.request((client) => client.deleteCollection(previous));
  }

  async checkpoint(): Promise<bigint> {
    return BigInt(((await this.meta())?.checkpoint as string | undefined) ?? '0');
  }

  async saveCheckpoint(position: bigint): Promise<void> {
    await this.writeMeta({ checkpoint: position.toString() });
  }

  async upsert(records: readonly RecordVectors[]): Promise<void> {
    checkDimensions(records, this.dimension);
    if (records.length === 0) return;
    const collection = await this.collectionName();
    const heads = await this.heads(records.map((record) => [record.tenant, record.recordId] as const));
    const current = records.filter((record) => {
      const held = heads.get(headId(record.tenant, record.recordId));
      return held === undefined || BigInt(held.position) <= record.position;
    });
    await this.deleteChunks(current.map((record) => [record.tenant, record.recordId] as const));
    const points: Schemas['PointStruct'][] = current.flatMap((record) => [
      this.headPoint(record.tenant, record.recordId, {
        kind: 'head',
        position: record.position.toString(),
        chunks: record.vectors.length,
        space: spaceKey(record.tenant, record.spaceId),
        module_id: record.moduleId,
        text_hash: record.textHash ?? null,
      }),
      ...record.vectors.map((vector, chunk) => ({
        id: chunkId(record.tenant, record.recordId, chunk),
        vector: [...vector],
        payload: {
          kind: 'chunk',
          tenant: record.tenant,
          space: spaceKey(record.tenant, record.spaceId),
          record_id: record.recordId,
          module_id: record.moduleId,
          chunk,
        },
      })),
    ]);
    for (let start = 0; start < points.length; start += 256)
      await this.request((client) =>
        client.upsert(collection, { wait: true, points: points.slice(start, start + 256) }),
      );
  }

  async held(tenant: string, recordIds: readonly number[]): Promise<Map<number, HeldRecord>> {
    if (recordIds.length === 0) return new Map();
    const heads = await this.heads(recordIds.map((recordId) => [tenant, recordId] as const));
    const held = new Map<number, HeldRecord>();
    for (const recordId of recordIds) {
      const head = heads.get(headId(tenant, recordId));
      if (head)
        held.set(recordId, {
          spaceId: Number(head.space.slice(head.space.lastIndexOf('/') + 1)),
          moduleId: head.module_id ?? 0,
          textHash: head.text_hash ?? null,
        });
    }
    return held;
  }

  async remove(tenant: string, recordIds: readonly number[], position: bigint): Promise<void> {
    if (recordIds.length === 0) return;
    const heads = await this.heads(recordIds.map((recordId) => [tenant, recordId] as const));
    const current = recordIds.filter((recordId) => {
      const held = heads.get(headId(tenant, recordId));
      return held !== undefined && BigInt(held.position) <= position;
    });
    if (current.length === 0) return;
    await this.deleteChunks(current.map((recordId) => [tenant, recordId] as const));
    const collection = await this.collectionName();
    const points = current.map((recordId) =>
      this.headPoint(tenant, recordId, {
        kind: 'head',
        position: position.toString(),
        chunks: 0,
        space: heads.get(headId(tenant, recordId))!.space,
        text_hash: null,
      }),
    );
    await this.request((client) => client.upsert(collection, { wait: true, points }));
  }

  async search(query: VectorQuery): Promise<VectorHit[]> {
    checkQueryDimension(query, this.dimension);
    if (query.records !== null && query.records.size === 0) return [];
    if (query.modules !== null && query.modules.size === 0) return [];
    const must: Condition[] = [match('space', spaceKey(query.tenant, query.spaceId)), match('kind', 'chunk')];
    if (query.records !== null) must.push({ key: 'record_id', match: { any: [...query.records] } });
    if (query.modules !== null) must.push({ key: 'module_id', match: { any: [...query.modules] } });
    const collection = await this.collectionName();
    return query.order === 'nearest'
      ? this.nearest(collection, must, query)
      : this.farthest(collection, must, query);
  }

  /**
   * Most alike first, a record ranked by its most alike chunk. Chunks first, twice the limit: their records in
   * order of first appearance are ranked by their best chunk. That is the answer when it names enough records
   * or holds every chunk that passed; only records of many chunks leave too few, and then Qdrant groups them
   * (several times slower than the plain search).
   */
  private async nearest(collection: string, must: Condition[], query: VectorQuery): Promise<VectorHit[]> {
    const request = {
      query: [...query.vector],
      filter: { must } satisfies Filter,
      ...(query.minSimilarity !== undefined && { score_threshold: query.minSimilarity }),
    };
    const chunkLimit = query.limit * 2;
    const chunks = await this.request((client) =>
      client.query(collection, { ...request, limit: chunkLimit, with_payload: ['record_id'] }),
    );
    const best = new Map<number, number>();
    for (const point of chunks.points) {
      const recordId = Number(point.payload?.record_id);
      if (!best.has(recordId)) best.set(recordId, point.score);
    }
    if (best.size >= query.limit || chunks.points.length < chunkLimit)
      return [...best].slice(0, query.limit).map(([recordId, similarity]) => ({ recordId, similarity }));
    const answer = await this.request((client) =>
      client.queryGroups(collection, {
        ...request,
        group_by: 'record_id',
        group_size: 1,
        limit: query.limit,
        with_payload: false,
      }),
    );
    return answer.groups.map((group) => ({
      recordId: Number(group.id),
      similarity: group.hits[0]?.score ?? 0,
    }));
  }

  /**
   * Least alike first, a record ranked by its most alike chunk too (one close chunk keeps it from being far).
   * Qdrant has no farthest-first search: an exact search of the negated query lists chunks least alike first
   * (a graph search misses most of them), and a second exact search within their records finds each one's most
   * alike chunk. A record not among the chunks scanned has every chunk at least as alike as the last one
   * scanned, so the answer is sure once `limit` records are no more alike than that; else the scan doubles.
   */
  private async farthest(collection: string, must: Condition[], query: VectorQuery): Promise<VectorHit[]> {
    const negated = [...query.vector].map((value) => -value);
    // Records more alike than this are closer than the distance floor (cosine distance = 1 − similarity).
    const ceiling = query.minDistance === undefined ? undefined : 1 - query.minDistance;
    for (let scan = query.limit * 2; ; scan *= 2) {
      const chunks = await this.request((client) =>
        client.query(collection, {
          query: negated,
          filter: { must } satisfies Filter,
          limit: scan,
          with_payload: ['record_id'],
          params: { exact: true },
          ...(ceiling !== undefined && { score_threshold: -ceiling }),
        }),
      );
      const recordIds = [...new Set(chunks.points.map((point) => Number(point.payload?.record_id)))];
      if (recordIds.length === 0) return [];
      const complete = chunks.points.length < scan;
      const edge = complete ? Infinity : -chunks.points.at(-1)!.score;
      const best = await this.mostAlikeChunks(collection, must, query.vector, recordIds);
      const sure = [...best]
        .filter(([, similarity]) => similarity <= edge && (ceiling === undefined || similarity <= ceiling))
        .sort((a, b) => a[1] - b[1]);
      if (complete || sure.length >= query.limit)
        return sure.slice(0, query.limit).map(([recordId, similarity]) => ({ recordId, similarity }));
    }
  }

  /** The similarity of each record's most alike chunk to `vector`, by an exact search within them. */
  private async mostAlikeChunks(
    collection: string,
    must: Condition[],
    vector: Float32Array,
    recordIds: readonly number[],
  ): Promise<Map<number, number>> {
    const answer = await this.request((client) =>
      client.queryGroups(collection, {
        query: [...vector],
        filter: { must: [...must, { key: 'record_id', match: { any: [...recordIds] } }] } satisfies Filter,
        group_by: 'record_id',
        group_size: 1,
        limit: recordIds.length,
        with_payload: false,
        params: { exact: true },
      }),
    );
    return new Map(answer.groups.map((group) => [Number(group.id), group.hits[0]?.score ?? 0]));
  }

  async count(tenant: string, spaceId: number): Promise<number> {
    const collection = await this.collectionName();
    const answer = await this.request((client) =>
      client.count(collection, {
        filter: {
          must: [match('space', spaceKey(tenant, spaceId)), match('kind', 'chunk'), match('chunk', 0)],
        },
        exact: true,
      }),
    );
    return answer.count;
  }

  async close(): Promise<void> {}

  /**
   * The collection of the index's identity, looked up again at most once a second: another process (a
   * rebuild) may have reset the index into a new collection meanwhile.
   */
  private async collectionName(): Promise<string> {
    if (Date.now() - this.checkedAt > 1000) {
      const identity = await this.identity();
      this.checkedAt = Date.now();
      if (identity !== null) this.collection = this.collectionFor(identity);
    }
    if (this.collection === undefined)
      throw new Error('the vector index has no identity yet: reset it first');
    return this.collection;
  }

  private headPoint(tenant: string, recordId: number, payload: HeadPayload): Schemas['PointStruct'] {
    // Heads are never searched (every search asks for chunks); any unit vector will do.
    const placeholder = new Array<number>(this.dimension).fill(0);
    placeholder[0] = 1;
    return {
      id: headId(tenant, recordId),
      vector: placeholder,
      payload: { ...payload, tenant, record_id: recordId },
    };
  }

  private async heads(records: ReadonlyArray<readonly [string, number]>): Promise<Map<string, HeadPayload>> {
    const ids = records.map(([tenant, recordId]) => headId(tenant, recordId));
    const collection = await this.collectionName();
    const found = await this.request((client) =>
      client.retrieve(collection, { ids, with_payload: true, with_vector: false }),
    );
    return new Map(found.map((point) => [String(point.id), point.payload as unknown as HeadPayload]));
  }

  private async deleteChunks(records: ReadonlyArray<readonly [string, number]>): Promise<void> {
    const byTenant = new Map<string, number[]>();
    for (const [tenant, recordId] of records)
      byTenant.set(tenant, [...(byTenant.get(tenant) ?? []), recordId]);
    const collection = await this.collectionName();
    for (const [tenant, recordIds] of byTenant)
      await this.request((client) =>
        client.delete(collection, {
          wait: true,
          filter: {
            must: [
              match('tenant', tenant),
              match('kind', 'chunk'),
              { key: 'record_id', match: { any: recordIds } },
            ],
          },
        }),
      );
  }

  private async meta(): Promise<Record<string, unknown> | null> {
    const [point] = await this.request((client) =>
      client.retrieve(this.metaCollection, { ids: [META_POINT], with_payload: true }),
    );
    return (point?.payload as Record<string, unknown> | null | undefined) ?? null;
  }

  private async writeMeta(values: Record<string, string>): Promise<void> {
    const current = (await this.meta()) ?? {};
    await this.request((client) =>
      client.upsert(this.metaCollection, {
        wait: true,
        points: [{ id: META_POINT, vector: [1], payload: { ...current, ...values } }],
      }),
    );
  }

  /** The collection of one identity (model, text recipe) and the index's dimension. */
  private collectionFor(identity: string): string {
    const digest = createHash('sha256').update(identity).digest('hex').slice(0, 16);
    return `${this.prefix}record_vectors_${this.dimension}_${digest}`;
  }

  /** The collection of an identity with its payload indexes; what another process made already is kept. */
  private async createIndexedCollection(name: string): Promise<void> {
    await this.createCollection(name, {
      vectors: { size: this.dimension, distance: 'Cosine' },
      // Per-space graphs: every search names its space (Qdrant's guidance for many tenants).
      hnsw_config: { m: 0, payload_m: 16 },
    });
    // Creating an index that is there already succeeds. Only the space gets graphs of its own: every search
    // names it, and a graph per value of the other fields cost as much indexing time each, unused.
    const indexes: Array<[string, Schemas['PayloadFieldSchema']]> = [
      ['space', { type: 'keyword', is_tenant: true }],
      ['tenant', { type: 'keyword', enable_hnsw: false }],
      ['kind', { type: 'keyword', enable_hnsw: false }],
      ['record_id', { type: 'integer', enable_hnsw: false }],
      ['module_id', { type: 'integer', enable_hnsw: false }],
    ];
    for (const [field, schema] of indexes)
      await this.request((client) =>
        client.createPayloadIndex(name, { field_name: field, field_schema: schema, wait: true }),
      );
  }

  /** Creates a collection unless it is there: two processes creating it at once both succeed. */
  private async createCollection(name: string, params: Schemas['CreateCollection']): Promise<void> {
    try {
      await this.request((client) => client.createCollection(name, params));
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
    }
  }

  /** One call to the server; its failures to answer become the port's unavailable error. */
  private async request<T>(call: (client: QdrantClient) => Promise<T>): Promise<T> {
    try {
      return await call(this.client);
    } catch (error) {
      throw translated(error);
    }
  }
}
