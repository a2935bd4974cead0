import wabtModule from 'wabt';

/**
 * The scoring kernel of the embedded vector index: dot products of int8 vectors with WebAssembly SIMD (16 lanes
 * at a time, widened to 16 bits and summed into 32-bit lanes), a whole space in one call. Plain JavaScript
 * needs 30–40 ms for 100,000 vectors of 512 dimensions; this takes about 2.5.
 *
 * Memory layout is the caller's: rows of `dimension` bytes from `rows`, the query at `query`, an int32 per
 * score at `out`, and for `scoreSome` an int32 row number per score at `which`. `dimension` is a multiple of 16.
 */
const KERNEL = `
(module
  (import "env" "memory" (memory 1))
  (func $dot (param $row i32) (param $query i32) (param $dimension i32) (result i32)
    (local $j i32) (local $acc v128) (local $a v128) (local $b v128)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $j) (local.get $dimension)))
        (local.set $a (v128.load (i32.add (local.get $row) (local.get $j))))
        (local.set $b (v128.load (i32.add (local.get $query) (local.get $j))))
        (local.set $acc (i32x4.add (local.get $acc)
          (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $a)) (i16x8.extend_low_i8x16_s (local.get $b)))))
        (local.set $acc (i32x4.add (local.get $acc)
          (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $a)) (i16x8.extend_high_i8x16_s (local.get $b)))))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $next)))
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
      (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))

  ;; out[r] = rows[r] · query for r in [0, count)
  (func (export "scoreAll") (param $rows i32) (param $count i32) (param $dimension i32) (param $query i32) (param $out i32)
    (local $r i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $r) (local.get $count)))
        (i32.store
          (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (call $dot
            (i32.add (local.get $rows) (i32.mul (local.get $r) (local.get $dimension)))
            (local.get $query) (local.get $dimension)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $next))))

  ;; out[i] = rows[which[i]] · query for i in [0, count)
  (func (export "scoreSome") (param $rows i32) (param $which i32) (param $count i32) (param $dimension i32) (param $query i32) (param $out i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (i32.store
          (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))
          (call $dot
            (i32.add (local.get $rows)
              (i32.mul (i32.load (i32.add (local.get $which) (i32.shl (local.get $i) (i32.const 2)))) (local.get $dimension)))
            (local.get $query) (local.get $dimension)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))
)`;

/** What this file uses of the WebAssembly global (Node has it; the project's TypeScript libraries do not declare it). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>;
  instantiate(module: object, imports: object): Promise<{ exports: object }>;
  Memory: new (descriptor: { initial: number; maximum?: number }) => WasmMemory;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** A WebAssembly page: memories grow by whole pages. */
export const WASM_PAGE_BYTES = 65_536;

/** A new memory of `bytes` at least, for a kernel. */
export function kernelMemory(bytes: number): WasmMemory {
  return new wasm.Memory({ initial: Math.max(1, Math.ceil(bytes / WASM_PAGE_BYTES)) });
}

export interface Int8Kernel {
  scoreAll(rows: number, count: number, dimension: number, query: number, out: number): void;
  scoreSome(rows: number, which: number, count: number, dimension: number, query: number, out: number): void;
}

let compiled: Promise<object> | undefined;

/** The kernel's module, compiled once per process (about 15 ms, on first use). */
function kernelModule(): Promise<object> {
  compiled ??= (async () => {
    const wabt = await wabtModule();
    const parsed = wabt.parseWat('int8-kernel.wat', KERNEL, { simd: true });
    try {
      const { buffer } = parsed.toBinary({});
      return wasm.compile(buffer);
    } finally {
      parsed.destroy();
    }
  })();
  return compiled;
}

/** The kernel working on `memory` (one per space: each space's vectors live in a memory of their own). */
export async function int8Kernel(memory: WasmMemory): Promise<Int8Kernel> {
  const instance = await wasm.instantiate(await kernelModule(), { env: { memory } });
  return instance.exports as unknown as Int8Kernel;
}
