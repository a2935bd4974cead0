import type Database from 'better-sqlite3';
import { openSqliteFile } from '../sqlite-file';
import {
  candidatesFor,
  checkDimensions,
  checkQueryDimension,
  type HeldRecord,
  type RecordVectors,
  type VectorHit,
  type VectorIndex,
  type VectorQuery,
} from './port';
import { quantised, SpaceVectors, type QuantisedVector } from './space-vectors';

/** Changes kept for other processes to catch up with; one further behind reloads the space. */
const KEPT_CHANGES = 200_000;

interface LoadedSpace {
  readonly vectors: SpaceVectors;
  /** The last change applied. */
  seq: number;
}

/** The index's generation: a reset (by this process or another) makes every loaded space stale. */
const GENERATION = 'generation';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vector_records (
  tenant TEXT NOT NULL,
  record_id INTEGER NOT NULL,
  space_id INTEGER NOT NULL,
  module_id INTEGER NOT NULL,
  position INTEGER NOT NULL,
  chunks INTEGER NOT NULL,
  text_hash TEXT,
  PRIMARY KEY (tenant, record_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vector_records_space ON vector_records (tenant, space_id);
CREATE TABLE IF NOT EXISTS vector_points (
  tenant TEXT NOT NULL,
  record_id INTEGER NOT NULL,
  chunk INTEGER NOT NULL,
  vector BLOB NOT NULL,
  codes BLOB NOT NULL,
  scale REAL NOT NULL,
  PRIMARY KEY (tenant, record_id, chunk)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vector_changes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant TEXT NOT NULL,
  space_id INTEGER NOT NULL,
  record_id INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS vector_changes_space ON vector_changes (tenant, space_id, seq);
`;

const toBlob = (vector: Float32Array) => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
const codesOf = (blob: Buffer) => new Int8Array(blob.buffer, blob.byteOffset, blob.byteLength);
/** The floats of a stored vector: a view where the bytes are aligned for it, else a copy. */
const fromBlob = (blob: Buffer) =>
  blob.byteOffset % 4 === 0
    ? new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4)
    : new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));

function dotProduct(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let index = 0; index < a.length; index++) sum += a[index]! * b[index]!;
  return sum;
}

/**
 * The embedded vector index: every vector in a SQLite file (float32, for exact scores), and each searched space
 * in memory as int8 codes scanned by a SIMD kernel (`SpaceVectors`), loaded on its first search. The top
 * candidates of a scan are re-ranked with their exact vectors, so the answer is exact but for a record
 * ranked past twice the limit by an estimate off by more than the gap (about 0.01 at most).
 *
 * Several processes may share the file (separate services on the embedded stores): every write appends to a
 * change log, and a search first applies the changes of its space made since it last looked.
 */
export class EmbeddedVectorIndex implements VectorIndex {
  private readonly spaces = new Map<string, Promise<LoadedSpace>>();
  private generation: string | undefined;
  private readonly statements;

  private constructor(
    private readonly db: Database.Database,
    readonly dimension: number,
  ) {
    // An index written before the codes were stored is dropped: it is derived, and its projection rebuilds it.
    const columnsOf = (table: string) =>
      db
        .prepare<[], { name: string }>(`PRAGMA table_info(${table})`)
        .all()
        .map((column) => column.name);
    const points = columnsOf('vector_points');
    const records = columnsOf('vector_records');
    if (
      (points.length > 0 && !points.includes('codes')) ||
      (records.length > 0 && !records.includes('text_hash'))
    )
      db.exec(
        'DROP TABLE vector_points; DROP TABLE IF EXISTS vector_records; DROP TABLE IF EXISTS vector_meta;',
      );
    db.exec(SCHEMA);
    this.statements = {
      meta: db.prepare<[string], { value: string }>('SELECT value FROM vector_meta WHERE key = ?'),
      setMeta: db.prepare('INSERT OR REPLACE INTO vector_meta (key, value) VALUES (?, ?)'),
      record: db
        .prepare<
          [string, number],
          { space_id: bigint; module_id: bigint; position: bigint; chunks: bigint; text_hash: string | null }
        >(
          'SELECT space_id, module_id, position, chunks, text_hash FROM vector_records WHERE tenant = ? AND record_id = ?',
        )
        .safeIntegers(true),
      setRecord: db.prepare(
        'INSERT OR REPLACE INTO vector_records (tenant, record_id, space_id, module_id, position, chunks, text_hash) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      deletePoints: db.prepare('DELETE FROM vector_points WHERE tenant = ? AND record_id = ?'),
      insertPoint: db.prepare(
        'INSERT INTO vector_points (tenant, record_id, chunk, vector, codes, scale) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      points: db.prepare<[string, number], { vector: Buffer }>(
        'SELECT vector FROM vector_points WHERE tenant = ? AND record_id = ? ORDER BY chunk',
      ),
      codes: db.prepare<[string, number], { codes: Buffer; scale: number }>(
        'SELECT codes, scale FROM vector_points WHERE tenant = ? AND record_id = ? ORDER BY chunk',
      ),
      spaceCodes: db.prepare<
        [string, number],
        { record_id: number; module_id: number; codes: Buffer; scale: number }
      >(
        `SELECT r.record_id, r.module_id, p.codes, p.scale
         FROM vector_records r JOIN vector_points p ON p.tenant = r.tenant AND p.record_id = r.record_id
         WHERE r.tenant = ? AND r.space_id = ? AND r.chunks > 0
         ORDER BY r.record_id, p.chunk`,
      ),
      change: db.prepare('INSERT INTO vector_changes (tenant, space_id, record_id) VALUES (?, ?, ?)'),
      changesSince: db.prepare<[string, number, number], { seq: number; record_id: number }>(
        'SELECT seq, record_id FROM vector_changes WHERE tenant = ? AND space_id = ? AND seq > ? ORDER BY seq',
      ),
      lastChange: db.prepare<[], { seq: number | null }>('SELECT max(seq) AS seq FROM vector_changes'),
      firstChange: db.prepare<[], { seq: number | null }>('SELECT min(seq) AS seq FROM vector_changes'),
      prune: db.prepare('DELETE FROM vector_changes WHERE seq <= ?'),
      spaceRows: db.prepare<[string, number], { rows: number | null }>(
        'SELECT sum(chunks) AS rows FROM vector_records WHERE tenant = ? AND space_id = ?',
      ),
    };
  }

  static open(path: string, dimension: number): EmbeddedVectorIndex {
    return new EmbeddedVectorIndex(openSqliteFile(path), dimension);
  }

  async identity(): Promise<string | null> {
    return this.statements.meta.get('identity')?.value ?? null;
  }

  async reset(identity: string): Promise<void> {
    this.db.transaction(() => {
      this.db.exec('DELETE FROM vector_records; DELETE FROM vector_points; DELETE FROM vector_changes;');
      this.statements.setMeta.run('identity', identity);
      this.statements.setMeta.run('checkpoint', '0');
      this.statements.setMeta.run(GENERATION, String(Date.now()) + Math.random().toString(36).slice(2));
    })();
    this.spaces.clear();
  }

  async checkpoint(): Promise<bigint> {
    return BigInt(this.statements.meta.get('checkpoint')?.value ?? '0');
  }

  async saveCheckpoint(position: bigint): Promise<void> {
    this.statements.setMeta.run('checkpoint', position.toString());
  }

  async upsert(records: readonly RecordVectors[]): Promise<void> {
    checkDimensions(records, this.dimension);
    this.db.transaction(() => {
      for (const record of records) {
        const { tenant, recordId } = record;
        const held = this.statements.record.get(tenant, recordId);
        if (held && held.position > record.position) continue;
        this.statements.setRecord.run(
          tenant,
          recordId,
          record.spaceId,
          record.moduleId,
          record.position,
          record.vectors.length,
          record.textHash ?? null,
        );
        this.statements.deletePoints.run(tenant, recordId);
        record.vectors.forEach((vector, chunk) => {
          // The int8 codes too: a space loads from them, a quarter of the floats, without quantising again.
          const { codes, scale } = quantised(vector);
          this.statements.insertPoint.run(
            tenant,
            recordId,
            chunk,
            toBlob(vector),
            Buffer.from(codes.buffer),
            scale,
          );
        });
        if (held && Number(held.space_id) !== record.spaceId)
          this.statements.change.run(tenant, Number(held.space_id), recordId);
        this.statements.change.run(tenant, record.spaceId, recordId);
      }
    })();
    this.pruneChanges();
  }

  async held(tenant: string, recordIds: readonly number[]): Promise<Map<number, HeldRecord>> {
    const held = new Map<number, HeldRecord>();
    for (const recordId of recordIds) {
      const row = this.statements.record.get(tenant, recordId);
      if (row)
        held.set(recordId, {
          spaceId: Number(row.space_id),
          moduleId: Number(row.module_id),
          textHash: row.text_hash,
        });
    }
    return held;
  }

  async remove(tenant: string, recordIds: readonly number[], position: bigint): Promise<void> {
    this.db.transaction(() => {
      for (const recordId of recordIds) {
        const held = this.statements.record.get(tenant, recordId);
        if (!held || held.position > position) continue;
        this.statements.setRecord.run(tenant, recordId, held.space_id, held.module_id, position, 0, null);
        this.statements.deletePoints.run(tenant, recordId);
        this.statements.change.run(tenant, Number(held.space_id), recordId);
      }
    })();
  }

  async search(query: VectorQuery): Promise<VectorHit[]> {
    checkQueryDimension(query, this.dimension);
    const space = await this.loaded(query.tenant, query.spaceId);
    const candidates = space.vectors.scan({
      vector: query.vector,
      count: candidatesFor(query.limit),
      order: query.order,
      records: query.records,
      modules: query.modules,
    });
    // Exact scores for the candidates, from their stored floats.
    const hits: VectorHit[] = [];
    for (const { recordId } of candidates) {
      let best = -Infinity;
      for (const { vector } of this.statements.points.all(query.tenant, recordId))
        best = Math.max(best, dotProduct(fromBlob(vector), query.vector));
      if (best > -Infinity) hits.push({ recordId, similarity: Math.min(1, Math.max(-1, best)) });
    }
    const nearest = query.order === 'nearest';
    return hits
      .filter((hit) =>
        nearest
          ? hit.similarity >= (query.minSimilarity ?? -Infinity)
          : 1 - hit.similarity >= (query.minDistance ?? -Infinity),
      )
      .sort((a, b) => (nearest ? b.similarity - a.similarity : a.similarity - b.similarity))
      .slice(0, query.limit);
  }

  /** From the space in memory (a search has just loaded it): no scan of its records. */
  async count(tenant: string, spaceId: number): Promise<number> {
    return (await this.loaded(tenant, spaceId)).vectors.size;
  }

  /** Bytes the spaces loaded so far hold in memory (vectors as int8 codes, and their bookkeeping). */
  async memoryBytes(): Promise<number> {
    const spaces = await Promise.all(this.spaces.values());
    return spaces.reduce((sum, space) => sum + space.vectors.bytes, 0);
  }

  async close(): Promise<void> {
    this.spaces.clear();
    this.db.close();
  }

  /** The space in memory, with every change made to it since it was last looked at. */
  private async loaded(tenant: string, spaceId: number): Promise<LoadedSpace> {
    const generation = this.statements.meta.get(GENERATION)?.value;
    if (generation !== this.generation) {
      this.spaces.clear();
      this.generation = generation;
    }
    const key = `${tenant}\u0000${spaceId}`;
    let loading = this.spaces.get(key);
    if (!loading) {
      loading = this.load(tenant, spaceId);
      this.spaces.set(key, loading);
      loading.catch(() => this.spaces.delete(key));
    }
    const space = await loading;
    const first = this.statements.firstChange.get()?.seq ?? 0;
    if (first > space.seq + 1) {
      // The changes it missed are pruned: load it again.
      this.spaces.delete(key);
      return this.loaded(tenant, spaceId);
    }
    for (const change of this.statements.changesSince.all(tenant, spaceId, space.seq)) {
      this.refreshRecord(space.vectors, tenant, spaceId, change.record_id);
      space.seq = change.seq;
    }
    return space;
  }

  /** A space from its stored codes, in one pass over its records' chunks in record order. */
  private async load(tenant: string, spaceId: number): Promise<LoadedSpace> {
    const vectors = await SpaceVectors.create(
      this.dimension,
      this.statements.spaceRows.get(tenant, spaceId)?.rows ?? 0,
    );
    const seq = this.statements.lastChange.get()?.seq ?? 0;
    let current: { recordId: number; moduleId: number; rows: QuantisedVector[] } | undefined;
    const place = () => current && vectors.setQuantised(current.recordId, current.moduleId, current.rows);
    for (const row of this.statements.spaceCodes.iterate(tenant, spaceId)) {
      if (current?.recordId !== row.record_id) {
        place();
        current = { recordId: row.record_id, moduleId: row.module_id, rows: [] };
      }
      current.rows.push({ codes: codesOf(row.codes), scale: row.scale });
    }
    place();
    return { vectors, seq };
  }

  private refreshRecord(vectors: SpaceVectors, tenant: string, spaceId: number, recordId: number): void {
    const held = this.statements.record.get(tenant, recordId);
    if (!held || Number(held.space_id) !== spaceId || held.chunks === 0n) vectors.remove(recordId);
    else
      vectors.setQuantised(
        recordId,
        Number(held.module_id),
        this.statements.codes
          .all(tenant, recordId)
          .map((row) => ({ codes: codesOf(row.codes), scale: row.scale })),
      );
  }

  /** Keeps the change log at about `KEPT_CHANGES` (pruned by a tenth at a time). */
  private pruneChanges(): void {
    const last = this.statements.lastChange.get()?.seq ?? 0;
    const first = this.statements.firstChange.get()?.seq ?? 0;
    if (last - first > KEPT_CHANGES * 1.1) this.statements.prune.run(last - KEPT_CHANGES);
  }
}
