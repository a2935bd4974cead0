import type { Request } from 'express';
import { PlatformError } from '../contracts/errors';
import { canonicalPosition, POSITION_TEXT_FORM } from '../contracts/positions';

/**
 * Read-your-writes: a reader that sends `X-Min-Position` (from a command's `X-Position`) is answered only
 * once the projections it reads have applied that position. In one-process mode the default is the last
 * position this process wrote, so a write is visible to the next read with no header at all.
 *
 * Reads of the credential projections go further (DESIGN §6: an answer about a credential, a permission or
 * a limit sees every write acknowledged before its request arrived, in every mode): they also wait for the
 * last event, in the store, of the categories those projections read, whichever process wrote it.
 */
export interface ReadConsistency {
  waitFor(position: bigint, projections: readonly string[], timeoutMs: number): Promise<boolean>;
  defaultMinPosition(): bigint;
  /** The position of the last event in the store that `projection` reads (any process's). */
  headOf(projection: string): Promise<bigint>;
  readonly timeoutMs: number;
}

/** The projections that hold credentials: users, tokens, sessions (identity); clients, grants (oauth). */
export const CREDENTIAL_PROJECTIONS: readonly string[] = ['identity', 'oauth'];

export async function awaitConsistency(
  req: Request,
  consistency: ReadConsistency,
  projections: readonly string[],
): Promise<void> {
  const position = minPositionOf(req, consistency.defaultMinPosition());
  const credentials = projections.filter((name) => CREDENTIAL_PROJECTIONS.includes(name));
  const others = projections.filter((name) => !CREDENTIAL_PROJECTIONS.includes(name));
  await Promise.all([
    awaitPosition(consistency, position, others),
    awaitCredentialHeads(consistency, credentials, position),
  ]);
}

/**
 * Waits until each of `projections` has applied the store's last event of its categories as it is now (and
 * `atLeast`): every credential write acknowledged before this call, by any process, is then visible.
 */
export async function awaitCredentialHeads(
  consistency: ReadConsistency,
  projections: readonly string[],
  atLeast = 0n,
): Promise<void> {
  await Promise.all(
    projections.map(async (projection) => {
      const head = await consistency.headOf(projection);
      await awaitPosition(consistency, head > atLeast ? head : atLeast, [projection]);
    }),
  );
}

function minPositionOf(req: Request, fallback: bigint): bigint {
  const header = req.headers['x-min-position'];
  if (header === undefined) return fallback;
  const text = Array.isArray(header) ? header[0]! : header;
  const demanded = canonicalPosition(text);
  if (demanded === undefined)
    throw new PlatformError(
      'validation_failed',
      `X-Min-Position must be a position (a command response's X-Position): ${POSITION_TEXT_FORM}`,
    );
  return demanded > fallback ? demanded : fallback;
}

/** Waits until `projections` have applied `position` (0: at once); a 504 after the timeout. */
export async function awaitPosition(
  consistency: ReadConsistency,
  position: bigint,
  projections: readonly string[],
): Promise<void> {
  if (position === 0n || projections.length === 0) return;
  if (!(await consistency.waitFor(position, projections, consistency.timeoutMs))) {
    throw new PlatformError(
      'position_timeout',
      `the read models did not reach position ${position} within ${consistency.timeoutMs} ms; retry shortly`,
    );
  }
}
