import type { Response } from 'express';
import { COMMON_ERRORS, errorBodySchema } from '../../contracts/api/document';
import { expressPath, type Operation } from '../../contracts/api/operation';
import { issuesOf } from '../../contracts/validation';
import { API_BASE } from './operations';

/** An answer that is not what its operation's contract says. */
export class AnswerOutOfContract extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnswerOutOfContract';
  }
}

/**
 * A check for `checkAnswersWith` that holds every JSON answer of a mounted operation to its contract: the
 * status must be declared (or one every operation declares), and the body must parse with the declared schema
 * (the error body for an error without one). The tests run with it, so the description the clients are
 * generated from says what the platform really answers.
 */
export function answerContractCheck(
  operations: readonly Operation[],
): (res: Response, status: number, body: unknown) => void {
  const byRoute = new Map(
    operations.map((op) => [`${op.method.toUpperCase()} ${API_BASE}${expressPath(op.path)}`, op]),
  );
  for (const op of operations)
    if (op.root) byRoute.set(`${op.method.toUpperCase()} ${expressPath(op.path)}`, op);
  return (res, status, body) => {
    const req = res.req;
    const routePath = (req.route as { path?: unknown } | undefined)?.path;
    if (typeof routePath !== 'string') return;
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const op = byRoute.get(`${method} ${req.baseUrl}${routePath}`);
    if (op === undefined) return;
    const declared = op.responses[status];
    const schema = declared?.schema ?? (status >= 400 ? errorBodySchema : undefined);
    if (declared === undefined && COMMON_ERRORS[status] === undefined)
      throw new AnswerOutOfContract(
        `${op.operationId} answered ${status}, which its contract does not declare`,
      );
    if (schema === undefined)
      throw new AnswerOutOfContract(
        `${op.operationId} answered ${status} with a body its contract does not declare`,
      );
    const parsed = schema.safeParse(body);
    if (!parsed.success)
      throw new AnswerOutOfContract(
        `${op.operationId} answered ${status} with a body out of its contract: ${issuesOf(parsed.error)
          .map((issue) => `${issue.path}: ${issue.message}`)
          .join('; ')}`,
      );
  };
}
