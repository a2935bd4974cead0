import type { IdAllocator } from './kit/id-allocator';
import type { IdempotencyKeys } from './kit/idempotency';
import type { CommandHandler } from './kit/handler';

/** What the command routes need, wired by the composition root. */
export interface CommandDeps {
  readonly handler: CommandHandler;
  readonly ids: IdAllocator;
  readonly idempotency: IdempotencyKeys;
  readonly newCommandId: () => string;
  /** The module that holds a field (null: no such field), from the fields read model. */
  readonly fieldModule: (tenant: string, fieldId: number) => Promise<number | null>;
}
