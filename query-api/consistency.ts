import type { Request } from 'express';
import { PlatformError } from '../contracts/errors';

/**
 * Read-your-writes: a reader that sends `X-Min-Position` (from a command's `X-Position`) is answered only
 * once the projections it reads have applied that position. In one-process mode the default is the last
 * position this process wrote, so a write is visible to the next read with no header at all.
 */
export interface ReadConsistency {
  waitFor(position: bigint, projections: readonly string[], timeoutMs: number): Promise<boolean>;
  defaultMinPosition(): bigint;
  readonly timeoutMs: number;
}

const POSITION = /^\d{1,20}$/;

export async function awaitConsistency(
  req: Request,
  consistency: ReadConsistency,
  projections: readonly string[],
): Promise<void> {
  const header = req.headers['x-min-position'];
  let position = consistency.defaultMinPosition();
  if (header !== undefined) {
    const text = Array.isArray(header) ? header[0]! : header;
    if (!POSITION.test(text))
      throw new PlatformError(
        'validation_failed',
        "X-Min-Position must be a non-negative integer (a command response's X-Position)",
      );
    const demanded = BigInt(text);
    if (demanded > position) position = demanded;
  }
  await awaitPosition(consistency, position, projections);
}

/** Waits until `projections` have applied `position` (0: at once); a 504 after the timeout. */
export async function awaitPosition(
  consistency: ReadConsistency,
  position: bigint,
  projections: readonly string[],
): Promise<void> {
  if (position === 0n) return;
  if (!(await consistency.waitFor(position, projections, consistency.timeoutMs))) {
    throw new PlatformError(
      'position_timeout',
      `the read models did not reach position ${position} within ${consistency.timeoutMs} ms; retry shortly`,
    );
  }
}
