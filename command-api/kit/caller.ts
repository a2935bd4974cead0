import { can, type Operation, type Principal } from '../../contracts/auth';
import { PlatformError } from '../../contracts/errors';
import type { CommandOrigin } from './handler';

/**
 * Who a command acts for, as a route (or anything else that calls a feature's commands) hands it over: the
 * principal, and the context the command's events are recorded with.
 */
export interface Caller {
  readonly principal: Principal;
  /** The context of the caller's commands but for their ids (a create's is known once it is identified). */
  readonly origin: CommandOrigin;
}

/** How a command that may come again is recognised: its Idempotency-Key (if any) and the request's hash. */
export interface RepeatIdentity {
  readonly key: string | undefined;
  readonly hash: () => string;
}

/** Refuses a principal that may not do `operation` on `module`. */
export function requireRight(principal: Principal, module: string, operation: Operation): void {
  if (!can(principal, module, operation))
    throw new PlatformError('forbidden', `this credential may not ${operation} ${module}`);
}
