import { z } from 'zod';
import { entityIdSchema } from './entity-id';

/**
 * Files attached to records: what may be uploaded and how a file is described. The bytes live in the blob
 * store; events and read models carry only this metadata and the content's SHA-256.
 */

/** Content types accepted by default. HTML, SVG and scripts are left out: served back, they could run in a browser. */
export const DEFAULT_FILE_CONTENT_TYPES = [
  'application/pdf',
  'application/zip',
  'application/json',
  'application/msword',
  'application/vnd.ms-excel',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/octet-stream',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'text/plain',
  'text/csv',
  'audio/mpeg',
  'video/mp4',
] as const;

export const MAX_FILES_PER_RECORD = 100;

/**
 * The first bytes every file of a type starts with. A declared type with a signature must match it, so a
 * script cannot be uploaded as `image/png`. Office documents are zip containers.
 */
const SIGNATURES: Readonly<Record<string, readonly (readonly number[])[]>> = {
  'application/pdf': [[0x25, 0x50, 0x44, 0x46, 0x2d]],
  'image/png': [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  'image/jpeg': [[0xff, 0xd8, 0xff]],
  'image/gif': [
    [0x47, 0x49, 0x46, 0x38, 0x37, 0x61],
    [0x47, 0x49, 0x46, 0x38, 0x39, 0x61],
  ],
  'application/zip': [[0x50, 0x4b, 0x03, 0x04]],
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': [[0x50, 0x4b, 0x03, 0x04]],
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': [[0x50, 0x4b, 0x03, 0x04]],
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': [[0x50, 0x4b, 0x03, 0x04]],
  'application/vnd.oasis.opendocument.text': [[0x50, 0x4b, 0x03, 0x04]],
  'application/vnd.oasis.opendocument.spreadsheet': [[0x50, 0x4b, 0x03, 0x04]],
  'application/msword': [[0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]],
  'application/vnd.ms-excel': [[0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]],
};

/** How many leading bytes `contentMatchesType` needs. */
export const SIGNATURE_BYTES = 12;

/** WebP is RIFF....WEBP: the size in bytes 4..7 varies. */
function isWebp(head: Uint8Array): boolean {
  const ascii = (from: number, to: number) => String.fromCharCode(...head.subarray(from, to));
  return head.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP';
}

/** Text types must be valid UTF-8 without NUL bytes (the head only; a multi-byte character may be cut at its end). */
function looksLikeText(head: Uint8Array): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/** Whether the first bytes of a file agree with its declared content type (types without a known signature pass). */
export function contentMatchesType(contentType: string, head: Uint8Array): boolean {
  if (contentType === 'image/webp') return isWebp(head);
  if (contentType === 'text/plain' || contentType === 'text/csv' || contentType === 'application/json')
    return looksLikeText(head);
  const signatures = SIGNATURES[contentType];
  if (!signatures) return true;
  return signatures.some((signature) => signature.every((byte, index) => head[index] === byte));
}

/** The media type alone, lower case: `Image/PNG; charset=x` → `image/png`. */
export function mediaTypeOf(contentType: string): string {
  return contentType.split(';', 1)[0]!.trim().toLowerCase();
}

/** A file name as shown and offered for download: no path, no control characters. */
export const fileNameSchema = z
  .string()
  .transform((name) => name.replace(/^.*[\\/]/, ''))
  .pipe(
    z
      .string()
      .min(1, 'a file needs a name')
      .max(255, 'file names are at most 255 characters')
      .refine((name) => !/[\p{Cc}]/u.test(name), 'file names must not contain control characters')
      .refine((name) => name !== '.' && name !== '..', 'not a file name'),
  );

/** `PUT /record/{recordId}/file-weight`: the display order of a record's files, lowest weight first. */
export const fileWeightsSchema = z.strictObject({
  files: z
    .array(
      z.strictObject({
        fileId: entityIdSchema,
        weight: z.number().int().min(0).max(1_000_000),
      }),
    )
    .min(1, 'name at least one file')
    .max(MAX_FILES_PER_RECORD),
});
