import type { Config } from '../infra/config';
import type { ProjectionStatus } from './host';
import type { DecodedWindow } from './window-decoder';

/**
 * Messages between the main thread and the projections thread of the one-process platform. `wake-flag` comes
 * first: a shared flag the main thread sets when it sends `appended` and the worker clears when it takes it, so
 * appends while a wake-up is on its way send nothing more (the worker reads them with it).
 */
export type ToProjectionsThread =
  | { readonly kind: 'wake-flag'; readonly flag: SharedArrayBuffer }
  | { readonly kind: 'appended' }
  | { readonly kind: 'stop' };

export type FromProjectionsThread =
  | { readonly kind: 'started'; readonly statuses: readonly ProjectionStatus[] }
  | {
      readonly kind: 'progress';
      readonly statuses: readonly ProjectionStatus[];
      /** Write-to-visible lag samples (ms) since the last report, per projection. */
      readonly visible: ReadonlyArray<readonly [string, number]>;
    }
  | { readonly kind: 'failed'; readonly message: string }
  /** The relay published to `topic` (the embedded stream's consumers of the main thread look at once). */
  | { readonly kind: 'published'; readonly topic: string }
  | { readonly kind: 'stopped' };

/** Messages between a rebuild and one of its decoder threads (`ThreadedWindowDecoder`). */
export interface ToDecoderThread {
  readonly id: number;
  readonly after: bigint;
  readonly upTo: bigint;
}

export type FromDecoderThread =
  | { readonly kind: 'ready' }
  | { readonly kind: 'decoded'; readonly id: number; readonly window: DecodedWindow }
  | { readonly kind: 'failed'; readonly id?: number; readonly message: string };

export interface DecoderThreadData {
  readonly config: Config;
  readonly projection: string;
  readonly version: number;
}
