import type { CommandHandler } from './handler';
import type { IdAllocator } from './id-allocator';
import type { IdempotencyKeys } from './idempotency';

/** What the kit's generic commands and routes take of the command API's dependencies (`CommandDeps`). */
export interface KernelDeps {
  readonly handler: CommandHandler;
  readonly ids: IdAllocator;
  readonly idempotency: IdempotencyKeys;
  readonly newCommandId: () => string;
}
