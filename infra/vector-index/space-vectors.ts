import { int8Kernel, kernelMemory, WASM_PAGE_BYTES, type Int8Kernel, type WasmMemory } from './int8-kernel';

/** A record as the scan ranks it: its estimated best similarity over its chunks. */
export interface ScanHit {
  readonly recordId: number;
  readonly estimate: number;
}

export interface ScanQuery {
  /** A unit vector of the space's dimension. */
  readonly vector: Float32Array;
  /** Records wanted, most alike first (`nearest`) or least alike first (`farthest`). */
  readonly count: number;
  readonly order: 'nearest' | 'farthest';
  /** Only these records (null: every record of the space). */
  readonly records: ReadonlySet<number> | null;
  /** Only records of these modules (null: every module). */
  readonly modules: ReadonlySet<number> | null;
}

interface RecordEntry {
  readonly slot: number;
  moduleId: number;
  rows: number[];
}

/** A vector as int8 codes and the scale back to floats. */
export interface QuantisedVector {
  readonly codes: Int8Array;
  readonly scale: number;
}

/** `vector` quantised on its own (what an index stores beside the floats, to load a space quickly). */
export function quantised(vector: Float32Array): QuantisedVector {
  const codes = new Int8Array(vector.length);
  return { codes, scale: quantise(vector, codes, 0) };
}

/** Quantises `vector` into `codes` (int8, the largest magnitude at ±127); returns the scale back to floats. */
export function quantise(vector: Float32Array, codes: Int8Array, offset: number): number {
  let largest = 0;
  for (let index = 0; index < vector.length; index++) largest = Math.max(largest, Math.abs(vector[index]!));
  if (largest === 0) {
    codes.fill(0, offset, offset + vector.length);
    return 0;
  }
  const factor = 127 / largest;
  for (let index = 0; index < vector.length; index++)
    codes[offset + index] = Math.round(vector[index]! * factor);
  return largest / 127;
}

/** A binary heap of the `capacity` best (record slot, score) pairs: its root is the worst kept. */
class BestOf {
  private readonly slots: Int32Array;
  private readonly scores: Float64Array;
  size = 0;

  constructor(
    private readonly capacity: number,
    /** Whether `a` ranks before `b`. */
    private readonly before: (a: number, b: number) => boolean,
  ) {
    this.slots = new Int32Array(capacity);
    this.scores = new Float64Array(capacity);
  }

  offer(slot: number, score: number): void {
    if (this.size < this.capacity) {
      let index = this.size++;
      while (index > 0) {
        const parent = (index - 1) >> 1;
        if (!this.before(this.scores[parent]!, score)) break;
        this.slots[index] = this.slots[parent]!;
        this.scores[index] = this.scores[parent]!;
        index = parent;
      }
      this.slots[index] = slot;
      this.scores[index] = score;
      return;
    }
    if (!this.before(score, this.scores[0]!)) return;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const worse = right < this.size && this.before(this.scores[left]!, this.scores[right]!) ? right : left;
      if (!this.before(score, this.scores[worse]!)) break;
      this.slots[index] = this.slots[worse]!;
      this.scores[index] = this.scores[worse]!;
      index = worse;
    }
    this.slots[index] = slot;
    this.scores[index] = score;
  }

  /** The kept pairs, best first. */
  sorted(): Array<{ slot: number; score: number }> {
    const pairs = Array.from({ length: this.size }, (_, index) => ({
      slot: this.slots[index]!,
      score: this.scores[index]!,
    }));
    return pairs.sort((a, b) => (this.before(a.score, b.score) ? -1 : this.before(b.score, a.score) ? 1 : 0));
  }
}

/**
 * The vectors of one space in memory, as int8 codes (a quarter of float32) in a WebAssembly memory of their
 * own, scored a whole space at a time by the SIMD kernel. A record has one row per chunk; its estimate is its
 * best row's. Rows are kept dense: a removed row's place takes the last row.
 *
 * Memory layout: the query (dimension bytes), then the rows, then scratch for scores and row lists, which
 * moves when the rows grow.
 */
export class SpaceVectors {
  private rowCount = 0;
  private capacity = 0;
  private rowSlots = new Int32Array(0);
  private rowScales = new Float32Array(0);
  private readonly records = new Map<number, RecordEntry>();
  private slotRecords = new Int32Array(0);
  private slotModules = new Int32Array(0);
  private readonly freeSlots: number[] = [];
  private slotCount = 0;
  /** Scratch: each record slot's best estimate during a scan (−∞ between scans). */
  private best = new Float64Array(0);

  private constructor(
    private readonly dimension: number,
    private readonly memory: WasmMemory,
    private readonly kernel: Int8Kernel,
  ) {}

  /** An empty space; `expectedRows` sizes its memory for the rows about to be loaded. */
  static async create(dimension: number, expectedRows = 0): Promise<SpaceVectors> {
    if (dimension % 16 !== 0)
      throw new RangeError(`the dimension must be a multiple of 16, not ${dimension}`);
    const memory = kernelMemory(dimension);
    const space = new SpaceVectors(dimension, memory, await int8Kernel(memory));
    space.ensureRows(expectedRows);
    return space;
  }

  /** Records held. */
  get size(): number {
    return this.records.size;
  }

  /** Bytes this space holds in memory, codes and bookkeeping. */
  get bytes(): number {
    return (
      this.memory.buffer.byteLength +
      this.rowSlots.byteLength +
      this.rowScales.byteLength +
      this.slotRecords.byteLength +
      this.slotModules.byteLength
    );
  }

  has(recordId: number): boolean {
    return this.records.has(recordId);
  }

  /** Sets a record's vectors (one per chunk), replacing what it had. */
  set(recordId: number, moduleId: number, vectors: readonly Float32Array[]): void {
    const wrong = vectors.find((vector) => vector.length !== this.dimension);
    if (wrong) throw new RangeError(`a vector of ${wrong.length} dimensions in a space of ${this.dimension}`);
    this.place(recordId, moduleId, vectors.length, (codes, offset, index) =>
      quantise(vectors[index]!, codes, offset),
    );
  }

  /** Sets a record's rows from codes already quantised (`quantise`), as an index stores them. */
  setQuantised(recordId: number, moduleId: number, rows: ReadonlyArray<QuantisedVector>): void {
    const wrong = rows.find((row) => row.codes.length !== this.dimension);
    if (wrong)
      throw new RangeError(`codes of ${wrong.codes.length} dimensions in a space of ${this.dimension}`);
    this.place(recordId, moduleId, rows.length, (codes, offset, index) => {
      codes.set(rows[index]!.codes, offset);
      return rows[index]!.scale;
    });
  }

  /** Replaces a record's rows with `count` new ones, each written by `write` (which returns its scale). */
  private place(
    recordId: number,
    moduleId: number,
    count: number,
    write: (codes: Int8Array, offset: number, index: number) => number,
  ): void {
    this.remove(recordId);
    if (count === 0) return;
    const slot = this.freeSlots.pop() ?? this.slotCount++;
    if (slot >= this.slotRecords.length) {
      this.slotRecords = grown(this.slotRecords, Math.max(16, slot * 2));
      this.slotModules = grown(this.slotModules, Math.max(16, slot * 2));
    }
    this.slotRecords[slot] = recordId;
    this.slotModules[slot] = moduleId;
    const entry: RecordEntry = { slot, moduleId, rows: [] };
    this.ensureRows(this.rowCount + count);
    const codes = new Int8Array(this.memory.buffer);
    for (let index = 0; index < count; index++) {
      const row = this.rowCount++;
      this.rowScales[row] = write(codes, this.rowOffset(row), index);
      this.rowSlots[row] = slot;
      entry.rows.push(row);
    }
    this.records.set(recordId, entry);
  }

  remove(recordId: number): void {
    const entry = this.records.get(recordId);
    if (!entry) return;
    // Highest rows first, so that a row moved into a hole is never one still to be removed.
    for (const row of [...entry.rows].sort((a, b) => b - a)) this.removeRow(row);
    this.records.delete(recordId);
    this.freeSlots.push(entry.slot);
  }

  /**
   * The `count` records most (or least) alike the query by their estimated best chunk, best first. Exact
   * similarities are the caller's to compute for these (the estimates are within about 0.01).
   */
  scan(query: ScanQuery): ScanHit[] {
    if (this.records.size === 0 || query.count <= 0) return [];
    const codes = new Int8Array(this.memory.buffer);
    const queryScale = quantise(query.vector, codes, 0);
    const which = this.selectedRows(query);
    const scored = which === null ? this.rowCount : which.length;
    const out = this.scratchOffset();
    if (which === null) this.kernel.scoreAll(this.dimension, scored, this.dimension, 0, out);
    else {
      const whichOffset = out + scored * 4;
      this.ensureBytes(whichOffset + scored * 4);
      new Int32Array(this.memory.buffer, whichOffset, scored).set(which);
      this.kernel.scoreSome(this.dimension, whichOffset, scored, this.dimension, 0, out);
    }
    const dots = new Int32Array(this.memory.buffer, out, scored);
    // A record's estimate is its best chunk's; only the slots scored are looked at again.
    if (this.best.length < this.slotCount) this.best = new Float64Array(this.slotCount * 2).fill(-Infinity);
    const best = this.best;
    const touched: number[] = [];
    for (let index = 0; index < scored; index++) {
      const row = which === null ? index : which[index]!;
      const estimate = dots[index]! * this.rowScales[row]! * queryScale;
      const slot = this.rowSlots[row]!;
      if (best[slot] === -Infinity) touched.push(slot);
      if (estimate > best[slot]!) best[slot] = estimate;
    }
    const nearest = query.order === 'nearest';
    const heap = new BestOf(Math.min(query.count, touched.length), (a, b) => (nearest ? a > b : a < b));
    for (const slot of touched) {
      heap.offer(slot, best[slot]!);
      best[slot] = -Infinity;
    }
    return heap.sorted().map(({ slot, score }) => ({ recordId: this.slotRecords[slot]!, estimate: score }));
  }

  /** The rows the query may score (null: all of them). */
  private selectedRows(query: ScanQuery): Int32Array | null {
    if (query.records === null && query.modules === null) return null;
    const rows: number[] = [];
    if (query.records !== null) {
      for (const recordId of query.records) {
        const entry = this.records.get(recordId);
        if (entry && (query.modules === null || query.modules.has(entry.moduleId))) rows.push(...entry.rows);
      }
    } else {
      const modules = query.modules!;
      for (let row = 0; row < this.rowCount; row++)
        if (modules.has(this.slotModules[this.rowSlots[row]!]!)) rows.push(row);
    }
    return Int32Array.from(rows);
  }

  private rowOffset(row: number): number {
    return this.dimension * (1 + row);
  }

  /** Where scores go: right after the rows' capacity. */
  private scratchOffset(): number {
    const out = this.rowOffset(this.capacity);
    this.ensureBytes(out + this.capacity * 8);
    return out;
  }

  private ensureRows(rows: number): void {
    if (rows <= this.capacity) return;
    this.capacity = Math.max(rows, Math.ceil(this.capacity * 1.25), 64);
    this.rowSlots = grown(this.rowSlots, this.capacity);
    this.rowScales = grown(this.rowScales, this.capacity);
    this.ensureBytes(this.rowOffset(this.capacity));
  }

  private ensureBytes(bytes: number): void {
    const missing = bytes - this.memory.buffer.byteLength;
    if (missing > 0) this.memory.grow(Math.ceil(missing / WASM_PAGE_BYTES));
  }

  private removeRow(row: number): void {
    const last = --this.rowCount;
    if (row !== last) {
      const codes = new Int8Array(this.memory.buffer);
      codes.copyWithin(this.rowOffset(row), this.rowOffset(last), this.rowOffset(last) + this.dimension);
      this.rowScales[row] = this.rowScales[last]!;
      const movedSlot = this.rowSlots[last]!;
      this.rowSlots[row] = movedSlot;
      const moved = this.records.get(this.slotRecords[movedSlot]!)!;
      moved.rows[moved.rows.indexOf(last)] = row;
    }
  }
}

function grown<T extends Int32Array | Float32Array>(array: T, length: number): T {
  const larger = new (array.constructor as new (length: number) => T)(length);
  larger.set(array);
  return larger;
}
