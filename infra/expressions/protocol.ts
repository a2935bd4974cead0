import type { ExpressionContext } from '../../languages/mapping/mapping';

/** What an expression process is told: one evaluation (its input and context serialized with `v8`). */
export interface ToExpressionProcess {
  readonly id: number;
  readonly expression: string;
  /** The input's id while the process keeps it (0: not kept, sent each time). */
  readonly inputId: number;
  /** `v8.serialize` of `EvaluationPayload`. */
  readonly payload: Uint8Array;
  readonly maxResultBytes: number;
}

/** The input is left out when the process keeps it from an earlier evaluation (`inputId`). */
export interface EvaluationPayload {
  readonly input?: unknown;
  readonly context: ExpressionContext;
}

export type FromExpressionProcess =
  | { readonly kind: 'ready' }
  | { readonly kind: 'result'; readonly id: number; readonly json: string }
  /** The expression failed (a `MappingError` of the run). */
  | { readonly kind: 'error'; readonly id: number; readonly message: string }
  /** The process could not evaluate (not the expression's fault). */
  | { readonly kind: 'failed'; readonly id: number; readonly message: string };

/** Inputs an expression process keeps (the newest ones, first in first out): a run's bundle is sent once. */
export const KEPT_INPUTS = 4;
