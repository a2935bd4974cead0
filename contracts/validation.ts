import type { z } from 'zod';
import { PlatformError } from './errors';

export interface IssueDetail {
  readonly path: string;
  readonly message: string;
}

export function issuesOf(error: z.ZodError): IssueDetail[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
  }));
}

/** Validates one part of a request; failures are a 400 that lists every problem with its path. */
export function validate<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  where: string,
): z.infer<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = issuesOf(result.error);
  const summary = details.map((detail) => `${detail.path}: ${detail.message}`).join('; ');
  throw new PlatformError('validation_failed', `invalid ${where}: ${summary}`, details);
}
