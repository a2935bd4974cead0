import type { ReadStore } from '../infra/read-store/port';
import { applyWindow, type DecodedWindow, type PositionWindow, type WindowDecoder } from './window-decoder';

/** Windows queued per decoder, so a decoder has the next window at hand while its last result is written. */
const WINDOWS_IN_FLIGHT_PER_DECODER = 2;
const MIN_WINDOW_SPAN = 5000n;
/** Past this many windows, windows grow instead, to keep per-window overhead small on big logs. */
const TARGET_WINDOWS = 1000n;

export interface ParallelCatchUp {
  readonly readStore: ReadStore;
  /** The checkpoint that moves with each applied window. */
  readonly checkpoint: string;
  readonly decoders: readonly WindowDecoder[];
  /** Exclusive: the position already applied. */
  readonly from: bigint;
  /** Inclusive: catch up to here. */
  readonly head: bigint;
  /** Told after each window is written. */
  readonly onApplied?: (position: bigint, events: number) => void;
}

export function windowsBetween(from: bigint, head: bigint): PositionWindow[] {
  const span =
    (head - from) / TARGET_WINDOWS > MIN_WINDOW_SPAN ? (head - from) / TARGET_WINDOWS : MIN_WINDOW_SPAN;
  const windows: PositionWindow[] = [];
  for (let after = from; after < head; after += span) {
    windows.push({ after, upTo: after + span < head ? after + span : head });
  }
  return windows;
}

/**
 * Catches a projection up with its decoding spread over several decoders (threads): windows of the log are
 * decoded in parallel and written here strictly in order, each with the checkpoint in the same `apply`, so
 * an interrupted catch-up resumes after the last written window and a replayed window changes nothing.
 * Returns the number of events applied.
 */
export async function catchUpInParallel(options: ParallelCatchUp): Promise<number> {
  const { decoders, readStore } = options;
  if (decoders.length === 0) throw new Error('a parallel catch-up needs at least one decoder');
  const windows = windowsBetween(options.from, options.head);
  const decoding = new Map<number, Promise<DecodedWindow>>();
  let dispatched = 0;
  const dispatchUpTo = (limit: number): void => {
    for (; dispatched < windows.length && dispatched < limit; dispatched++) {
      const decoded = decoders[dispatched % decoders.length]!.decode(windows[dispatched]!);
      // Awaited in order below; a failure is reported there, not as an unhandled rejection.
      decoded.catch(() => undefined);
      decoding.set(dispatched, decoded);
    }
  };
  let events = 0;
  for (let index = 0; index < windows.length; index++) {
    dispatchUpTo(index + 1 + decoders.length * WINDOWS_IN_FLIGHT_PER_DECODER);
    const decoded = await decoding.get(index)!;
    decoding.delete(index);
    const window = windows[index]!;
    await applyWindow(readStore, decoded, { name: options.checkpoint, value: window.upTo.toString() });
    events += decoded.events;
    options.onApplied?.(window.upTo, events);
  }
  return events;
}

export interface CatchUpMeanwhile {
  readonly readStore: ReadStore;
  readonly checkpoint: string;
  /** This thread's decoder. */
  readonly decoder: WindowDecoder;
  readonly from: bigint;
  readonly head: bigint;
  /** Asked before each window: true stops the catch-up there. */
  readonly stop: () => boolean;
  readonly onApplied?: (position: bigint, events: number) => void;
}

/**
 * Catches up window by window on this thread, each window written with the checkpoint as `catchUpInParallel`
 * writes them, until `stop` says so: what a rebuild does while its decoder threads start. Returns the position
 * reached and the events applied.
 */
export async function catchUpUntilStopped(
  options: CatchUpMeanwhile,
): Promise<{ readonly position: bigint; readonly events: number }> {
  let position = options.from;
  let events = 0;
  for (const window of windowsBetween(options.from, options.head)) {
    // Reads and writes may all complete without leaving the microtask queue (SQLite): a turn of the event
    // loop lets what `stop` waits for (a thread's message) arrive.
    await new Promise((resolve) => setImmediate(resolve));
    if (options.stop()) break;
    const decoded = await options.decoder.decode(window);
    await applyWindow(options.readStore, decoded, {
      name: options.checkpoint,
      value: window.upTo.toString(),
    });
    position = window.upTo;
    events += decoded.events;
    options.onApplied?.(position, events);
  }
  return { position, events };
}
