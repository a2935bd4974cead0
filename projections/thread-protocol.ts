import type { ProjectionStatus } from './host';

/** Messages between the main thread and the projections thread of the one-process platform. */
export type ToProjectionsThread = { readonly kind: 'appended' } | { readonly kind: 'stop' };

export type FromProjectionsThread =
  | { readonly kind: 'started'; readonly statuses: readonly ProjectionStatus[] }
  | {
      readonly kind: 'progress';
      readonly statuses: readonly ProjectionStatus[];
      /** Write-to-visible lag samples (ms) since the last report, per projection. */
      readonly visible: ReadonlyArray<readonly [string, number]>;
    }
  | { readonly kind: 'failed'; readonly message: string }
  | { readonly kind: 'stopped' };
