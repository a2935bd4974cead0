import { z } from 'zod';
import type { EventDefinition } from './definition';

/**
 * Files of a record: events of the record's stream, so the record rules its own files (how many, which
 * file field they fill, their order). They carry metadata and the content's SHA-256, never the bytes.
 */
const id = z.number().int().positive();

export const fileAttached = z.object({
  recordId: id,
  fileId: id,
  /** The file field the file fills, or null for a file of the record as a whole. */
  fieldId: id.nullable(),
  name: z.string(),
  contentType: z.string(),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Where the bytes are in the blob store. */
  blobKey: z.string(),
  weight: z.number().int().nonnegative(),
});
export const fileDetached = z.object({
  recordId: id,
  fileId: id,
  fieldId: id.nullable(),
  blobKey: z.string(),
});
export const fileWeightsSet = z.object({
  recordId: id,
  weights: z.array(z.object({ fileId: id, weight: z.number().int().nonnegative() })).min(1),
});

export type FileAttachedData = z.infer<typeof fileAttached>;
export type FileDetachedData = z.infer<typeof fileDetached>;
export type FileWeightsSetData = z.infer<typeof fileWeightsSet>;

export type RecordFileEvent =
  | { type: 'FileAttached'; data: FileAttachedData }
  | { type: 'FileDetached'; data: FileDetachedData }
  | { type: 'FileWeightsSet'; data: FileWeightsSetData };

export const FILE_EVENTS: readonly EventDefinition[] = [
  { type: 'FileAttached', version: 1, schema: fileAttached },
  { type: 'FileDetached', version: 1, schema: fileDetached },
  { type: 'FileWeightsSet', version: 1, schema: fileWeightsSet },
];
