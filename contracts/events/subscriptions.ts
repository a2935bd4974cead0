import { z } from 'zod';
import type { EventDefinition, EventOf } from './definition';

const subscriptionId = z.number().int().positive();
const at = z.iso.datetime();
/** A secret (signing secret, header values) sealed by the platform's sealer: none enters an event in clear. */
const sealed = z.string().startsWith('v1.');

/**
 * The settings as stored: checked when written (`contracts/subscriptions.ts`), kept loose here so that a
 * stored event stays valid when those checks or the catalogue of event types change.
 */
const storedSettings = {
  name: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  filter: z.string().nullable(),
  /** The extra headers' names, in the order given; their values are in `sealedHeaders`. */
  headerNames: z.array(z.string()),
  /** The extra headers (name → value) as sealed JSON, since values may be credentials (null: none). */
  sealedHeaders: sealed.nullable(),
};
const storedSettingsSchema = z.object(storedSettings);
/** A subscription's settings as its events carry them. */
export type StoredSubscriptionSettings = z.infer<typeof storedSettingsSchema>;

const subscriptionCreated = z.object({
  subscriptionId,
  ...storedSettings,
  active: z.boolean(),
  sealedSecret: sealed,
  createdAt: at,
});
const subscriptionChanged = z.object({
  subscriptionId,
  ...storedSettingsSchema.partial().shape,
});
/**
 * The previous secret (sealed) keeps signing until `previousExpiresAt`, so a deliverer signs with both and
 * receivers can switch without missing a delivery.
 */
const subscriptionSecretRotated = z.object({
  subscriptionId,
  sealedSecret: sealed,
  previousSealedSecret: sealed,
  previousExpiresAt: at,
});
const subscriptionDisabled = z.object({ subscriptionId, reason: z.string().min(1).max(500) });
const subscriptionRef = z.object({ subscriptionId });
const position = z.string().regex(/^\d{1,20}$/);
/**
 * Deliver again the subscription's matching events after `after` up to `until` (null: up to this event's own
 * position, so the live flow takes over from there), in order. A redelivery of one event names it.
 */
const subscriptionReplayRequested = z.object({
  subscriptionId,
  replayId: z.uuid(),
  after: position,
  until: position.nullable(),
  eventId: z.uuid().nullable(),
});

export type SubscriptionEvent =
  | EventOf<'SubscriptionCreated', typeof subscriptionCreated>
  | EventOf<'SubscriptionChanged', typeof subscriptionChanged>
  | EventOf<'SubscriptionSecretRotated', typeof subscriptionSecretRotated>
  | EventOf<'SubscriptionDisabled', typeof subscriptionDisabled>
  | EventOf<'SubscriptionEnabled', typeof subscriptionRef>
  | EventOf<'SubscriptionDeleted', typeof subscriptionRef>
  | EventOf<'SubscriptionReplayRequested', typeof subscriptionReplayRequested>;
export type SubscriptionReplayRequestedData = z.infer<typeof subscriptionReplayRequested>;

/** The keys of subscription events that hold sealed secrets: kept out of read models and history. */
export const SEALED_SUBSCRIPTION_KEYS: readonly string[] = [
  'sealedSecret',
  'previousSealedSecret',
  'sealedHeaders',
];

export const SUBSCRIPTION_EVENTS: readonly EventDefinition[] = [
  { type: 'SubscriptionCreated', version: 1, schema: subscriptionCreated },
  { type: 'SubscriptionChanged', version: 1, schema: subscriptionChanged },
  { type: 'SubscriptionSecretRotated', version: 1, schema: subscriptionSecretRotated },
  { type: 'SubscriptionDisabled', version: 1, schema: subscriptionDisabled },
  { type: 'SubscriptionEnabled', version: 1, schema: subscriptionRef },
  { type: 'SubscriptionDeleted', version: 1, schema: subscriptionRef },
  { type: 'SubscriptionReplayRequested', version: 1, schema: subscriptionReplayRequested },
];
