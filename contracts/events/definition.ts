import type { z } from 'zod';

/** An event type: its current schema version, data schema, and upcasters from older stored versions. */
export interface EventDefinition {
  readonly type: string;
  readonly version: number;
  readonly schema: z.ZodType;
  /** `upcasters[v]` turns the data of version v into version v + 1. */
  readonly upcasters?: Readonly<Record<number, (data: unknown) => unknown>>;
}

/** A domain event of type `Type` whose data is what `Schema` describes: the members of a stream's event union. */
export type EventOf<Type extends string, Schema extends z.ZodType> = { type: Type; data: z.infer<Schema> };
