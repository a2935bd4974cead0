import type { Request, Response } from 'express';
import { mayActOnAccount, type Operation, type Principal } from '../../contracts/auth';
import { PlatformError } from '../../contracts/errors';
import { contextOf, principalOf } from '../../infra/http/context';
import { etagOf, expectedRevisionsFromIfMatch } from '../../infra/http/conditional';
import {
  withCommandId,
  type CommandContext,
  type CommandOrigin,
  type CommandResult,
  type HandleOptions,
} from './handler';
import { requireRight, type Caller } from './caller';
import { sendJson } from '../../infra/http/respond';

/** The principal, after checking it may do `operation` on `module`. */
export function authorize(req: Request, module: string, operation: Operation): Principal {
  const principal = principalOf(req);
  requireRight(principal, module, operation);
  return principal;
}

/**
 * The principal, when it acts on account `userId` (`/user/{userId}/…`, `/auth/{userId}/token…`): users on
 * their own account need only a credential that allows it; others must be administrators with the right.
 */
export function authorizeAccount(
  req: Request,
  userId: number,
  module: string,
  operation: Operation,
  refusal: string,
): { principal: Principal; self: boolean } {
  const principal = principalOf(req);
  const self = principal.userId === String(userId);
  if (!mayActOnAccount(principal, userId, module, operation))
    throw new PlatformError('forbidden', self ? `this credential may not ${operation} ${module}` : refusal);
  return { principal, self };
}

/** The caller a request's commands act for. */
export function callerOf(req: Request, principal: Principal): Caller {
  return { principal, origin: commandOrigin(req, principal) };
}

export function commandContext(req: Request, principal: Principal, commandId: string): CommandContext {
  return withCommandId(commandOrigin(req, principal), commandId);
}

/** The context of this request's command, but for the command's id. */
export function commandOrigin(req: Request, principal: Principal): CommandOrigin {
  const { requestId } = contextOf(req);
  const correlation = req.headers['x-correlation-id'];
  const correlationId =
    typeof correlation === 'string' && /^[\x21-\x7e]{1,128}$/.test(correlation) ? correlation : requestId;
  return {
    tenant: principal.tenant,
    actor: {
      userId: principal.userId,
      credentialId: principal.credential.id,
      ...(principal.credential.clientId !== undefined && { clientId: principal.credential.clientId }),
    },
    correlationId,
    causationId: requestId,
  };
}

/** Handler options from the request: `If-Match` becomes a revision precondition (412 on mismatch). */
export function preconditions(req: Request): HandleOptions {
  const ifMatch = expectedRevisionsFromIfMatch(req.headers['if-match']);
  return ifMatch === undefined ? {} : { ifMatch };
}

export function idempotencyKey(req: Request): string | undefined {
  const header = req.headers['idempotency-key'];
  return Array.isArray(header) ? header[0] : header;
}

/** Sends a command's answer with the position it reached (read-your-writes) and the new ETag. */
export function sendResult<State>(
  res: Response,
  status: number,
  result: CommandResult<State>,
  body: unknown,
): void {
  if (result.revision !== undefined) res.setHeader('ETag', etagOf(result.revision));
  if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
  sendAt(res, status, result.position, body);
}

/** Sends an answer with the position its writes reached, if any, as `X-Position` (read-your-writes). */
export function sendAt(res: Response, status: number, position: bigint | undefined, body: unknown): void {
  if (position !== undefined) res.setHeader('X-Position', position.toString());
  sendJson(res, status, body);
}
