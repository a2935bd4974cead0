import { createHash } from 'node:crypto';
import { z } from 'zod';

/** The path parameters of `/record/remote/{remoteId}/{remoteApplication}`. */
export const remoteParams = z.object({
  remoteId: z.string().regex(/^[\x21-\x7e]{1,200}$/, 'remoteId must be 1-200 visible ASCII characters'),
  remoteApplication: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'remoteApplication must be 1-64 letters, digits, _ . or -'),
});

/** A remote key as a stream and document id: remote ids may hold any visible character, so they are hashed. */
export function remoteKey(remoteApplication: string, remoteId: string): string {
  return createHash('sha256').update(`${remoteApplication}\n${remoteId}`).digest('hex').slice(0, 40);
}
