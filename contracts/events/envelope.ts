import { z } from 'zod';
import type { DataPath } from '../personal-data';

/** Who caused an event: the user, and the credential they used (API token or OAuth client), if any. */
export const actorSchema = z.object({
  userId: z.string().nullable(),
  credentialId: z.string().optional(),
  clientId: z.string().optional(),
});
export type Actor = z.infer<typeof actorSchema>;

export const eventMetadataSchema = z.object({
  tenant: z.string().min(1),
  actor: actorSchema,
  correlationId: z.string().min(1),
  causationId: z.string().min(1),
  commandId: z.string().min(1),
  occurredAt: z.iso.datetime(),
  /** The data key subject (`record:acme:42`) the event's personal values are sealed for, if it has any. */
  subject: z.string().optional(),
});
export type EventMetadata = z.infer<typeof eventMetadataSchema>;

/** An event as the write side produces it, before the store gives it a revision and a position. */
export interface NewEvent<Type extends string = string, Data = unknown> {
  /** UUID; derived from the command id so a repeated command produces the same ids. */
  readonly id: string;
  readonly type: Type;
  readonly schemaVersion: number;
  readonly data: Data;
  readonly metadata: EventMetadata;
  /**
   * The values to seal before the event is stored (the event store does, and drops this): where they are in
   * `data` and whose they are. Never stored: stored events say only `metadata.subject`.
   */
  readonly sealing?: { readonly subject: string; readonly paths: readonly DataPath[] };
}

/** An event as read back from the store. Revisions are 0-based per stream; positions are global and ordered. */
export interface RecordedEvent<Type extends string = string, Data = unknown> extends NewEvent<Type, Data> {
  readonly streamId: string;
  readonly revision: bigint;
  readonly position: bigint;
  readonly recordedAt: string;
}
