import { z } from 'zod';
import type { EventDefinition } from './definition';

/** Write-side bookkeeping: integer id blocks (hi/lo) and claimed Idempotency-Keys. */
export const idBlockReserved = z.object({
  sequence: z.string().min(1),
  from: z.number().int().positive(),
  to: z.number().int().positive(),
});
export type IdBlockReservedData = z.infer<typeof idBlockReserved>;

export const idempotencyKeyClaimed = z.object({
  requestHash: z.string().length(64),
  commandId: z.uuid(),
  /** The entity the command creates, when it creates one, so a repeat targets the same stream. */
  entityId: z.number().int().positive().nullable(),
  /** A bulk create: the id of each item, in order (`entityId` is then the first). */
  entityIds: z.array(z.number().int().positive()).optional(),
});
export type IdempotencyKeyClaimedData = z.infer<typeof idempotencyKeyClaimed>;

export type SystemEvent =
  | { type: 'IdBlockReserved'; data: IdBlockReservedData }
  | { type: 'IdempotencyKeyClaimed'; data: IdempotencyKeyClaimedData };

export const SYSTEM_EVENTS: readonly EventDefinition[] = [
  { type: 'IdBlockReserved', version: 1, schema: idBlockReserved },
  { type: 'IdempotencyKeyClaimed', version: 1, schema: idempotencyKeyClaimed },
];
