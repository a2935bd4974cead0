import type { BlobStore } from '../../infra/blob-store/port';
import type { Logger } from '../../infra/logging';

/**
 * Deletes blobs no event needs any more (erased, or never referred to): a failure is logged with `whatToDo`
 * and does not fail the command, whose events already say the blob is gone.
 */
export async function deleteBlobs(
  deps: { readonly blobs: BlobStore; readonly logger: Logger },
  blobKeys: Iterable<string>,
  whatToDo: string,
): Promise<void> {
  await Promise.all(
    [...new Set(blobKeys)].map((blobKey) =>
      deps.blobs
        .delete(blobKey)
        .catch((error: unknown) => deps.logger.warn({ err: error, blobKey }, whatToDo)),
    ),
  );
}
