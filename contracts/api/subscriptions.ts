/**
 * Outgoing subscriptions: who is told about which public events, where, and the secret deliveries are signed
 * with (Standard Webhooks); the log of their deliveries, a redelivery of one event and a replay from any point.
 */
import { z } from 'zod';
import {
  DEFAULT_SECRET_OVERLAP_MINUTES,
  MAX_SECRET_OVERLAP_MINUTES,
  subscriptionSettingsShape,
} from '../subscriptions';
import { updateOf } from './catalogue';
import { auditPage } from './files';
import { canonicalPosition, POSITION_PATTERN, POSITION_TEXT_FORM } from '../positions';
import { rfc3339Time, RFC_3339_TEXT_FORM } from '../times';
import { operation } from './operation';
import {
  auditFields,
  entityId,
  entityOperations,
  etagHeader,
  listed,
  listQuery,
  locationHeader,
  pathIds,
  READ_ERRORS,
  WRITE_ERRORS,
} from './shared';

const active = z
  .boolean()
  .meta({ description: 'Deliveries are made (false: none until it is enabled again).' });

export const createSubscriptionBody = z
  .strictObject({
    name: subscriptionSettingsShape.name,
    url: subscriptionSettingsShape.url,
    events: subscriptionSettingsShape.events,
    filter: subscriptionSettingsShape.filter.optional(),
    active: active.optional().meta({ description: 'Default true.' }),
    headers: subscriptionSettingsShape.headers.optional(),
  })
  .meta({ id: 'SubscriptionCreate' });
export const updateSubscriptionBody = updateOf({ ...subscriptionSettingsShape, active }).meta({
  id: 'SubscriptionUpdate',
});

const subscriptionCore = {
  id: entityId,
  name: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  filter: z.string().nullable(),
  headerNames: z.array(z.string()).meta({
    description:
      "The extra headers' names. Their values are sealed at rest and write-only: no answer shows them.",
  }),
  active,
  disabledReason: z
    .string()
    .nullable()
    .meta({ description: 'Why it was disabled (null: active, or disabled without a reason).' }),
  previousSecretExpiresAt: z.string().nullable().meta({
    description: 'After a rotation: until when the previous secret still signs beside the new one.',
  }),
};
export const subscriptionWritten = z.object(subscriptionCore).meta({ id: 'SubscriptionWritten' });
const subscriptionRead = z.object({ ...subscriptionCore, ...auditFields }).meta({ id: 'Subscription' });
const secret = z.string().meta({
  description:
    'The signing secret (`whsec_` + base64 of 32 bytes, as Standard Webhooks writes it). Shown only in this answer: keep it.',
});
const subscriptionWithSecret = z
  .object({ ...subscriptionCore, secret })
  .meta({ id: 'SubscriptionWithSecret' });

const entity = entityOperations({
  noun: 'subscription',
  name: 'Subscription',
  plural: 'Subscriptions',
  tag: 'subscriptions',
  idName: 'subscriptionId',
  createBody: createSubscriptionBody,
  updateBody: updateSubscriptionBody,
  written: subscriptionWritten,
  read: subscriptionRead,
  examples: {
    create: {
      name: 'Open orders',
      url: 'https://example.com/hooks/records',
      events: ['record.created', 'record.updated'],
      filter: 'moduleId=7;status=open',
    },
  },
});

export const SUBSCRIPTION_OPERATIONS = {
  ...entity,
  create: operation({
    ...entity.create,
    description:
      'The answer holds the signing secret, once: reads never show it. `Idempotency-Key` makes a retry safe ' +
      '(a repeat answers the same secret).',
    responses: {
      201: {
        description: 'The created subscription, with its signing secret.',
        schema: subscriptionWithSecret,
        headers: { ...locationHeader, ...etagHeader },
      },
      ...WRITE_ERRORS,
    },
  }),
};

const subscriptionPath = pathIds({ subscriptionId: 'The subscription.' });

export const rotateSubscriptionSecretBody = z
  .strictObject({
    overlapMinutes: z
      .int()
      .min(0)
      .max(MAX_SECRET_OVERLAP_MINUTES)
      .optional()
      .meta({
        description: `How long the previous secret keeps signing beside the new one (default ${DEFAULT_SECRET_OVERLAP_MINUTES}: 24 hours).`,
      }),
  })
  .meta({ id: 'SubscriptionSecretRotation' });

export const rotateSubscriptionSecret = operation({
  operationId: 'rotateSubscriptionSecret',
  method: 'post',
  path: '/subscription/{subscriptionId}/secret',
  tag: 'subscriptions',
  summary: "Rotate a subscription's signing secret",
  description:
    'A new secret signs from now on, shown once in the answer; the previous one keeps signing too until ' +
    '`previousSecretExpiresAt` (deliveries then carry both signatures), so receivers can switch without a gap.',
  params: subscriptionPath,
  body: { schema: rotateSubscriptionSecretBody, required: false },
  responses: {
    200: {
      description: 'The subscription, with its new signing secret.',
      schema: subscriptionWithSecret,
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});

export const listSubscriptionHistory = operation({
  operationId: 'listSubscriptionHistory',
  method: 'get',
  path: '/subscription/{subscriptionId}/history',
  tag: 'subscriptions',
  summary: "A subscription's history, newest first",
  description: 'Every change of the subscription, with who made it; secrets are never shown.',
  params: subscriptionPath,
  query: listQuery,
  responses: { 200: { description: 'A page of events.', schema: auditPage }, ...READ_ERRORS },
  security: 'token',
});

/** A UUID as the platform writes them (lower case): an event's, a replay's. */
const canonicalUuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'must be a UUID in lower case');
const positionText = z
  .string()
  .regex(POSITION_PATTERN, `must be a position (${POSITION_TEXT_FORM})`)
  .meta({ description: "A position in the platform's event log (decimal digits: it may exceed 2^53)." });

export const DELIVERY_STATUSES = ['delivered', 'retrying', 'failed'] as const;

const deliveryAttempt = z
  .object({
    id: z.string().meta({ description: 'The attempt.' }),
    eventId: z.string().meta({ description: 'The event, and the `webhook-id` of every attempt of it.' }),
    eventType: z.string(),
    position: positionText,
    replayId: z
      .string()
      .nullable()
      .meta({ description: 'The replay or redelivery that queued it (null: the live flow).' }),
    attempt: z.int().meta({ description: '1 for the first attempt of this delivery.' }),
    at: z.string().meta({ description: 'When the attempt was made.' }),
    status: z.enum(DELIVERY_STATUSES).meta({
      description:
        '`delivered`: the receiver answered 2xx; `retrying`: another attempt is due at `nextAttemptAt`; `failed`: the retries are used up.',
    }),
    latencyMs: z.int(),
    responseStatus: z
      .int()
      .nullable()
      .meta({ description: 'null: no answer (refused, unreachable, timed out).' }),
    responseBody: z.string().meta({ description: 'The first kilobyte of the answer.' }),
    error: z.string().nullable(),
    nextAttemptAt: z.string().nullable(),
  })
  .meta({ id: 'DeliveryAttempt' });

export const deliveryLogQuery = z.strictObject({
  eventId: canonicalUuid.optional().meta({ description: "Only this event's attempts." }),
  status: z.enum(DELIVERY_STATUSES).optional(),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(20)
    .meta({ description: 'At most 100; default 20.' }),
  before: z
    .string()
    .max(100)
    .optional()
    .meta({ description: 'The `next` of the previous page: the attempts older than its last.' }),
});

export const listSubscriptionDeliveries = operation({
  operationId: 'listSubscriptionDeliveries',
  method: 'get',
  path: '/subscription/{subscriptionId}/delivery',
  tag: 'subscriptions',
  summary: "A subscription's delivery attempts, newest first",
  description:
    "Each attempt of the last 3 days (`DELIVERY_LOG_RETENTION_HOURS`): its status, latency, the answer's " +
    'status and first kilobyte. Pages go back with `before`.',
  params: subscriptionPath,
  query: deliveryLogQuery,
  responses: {
    200: {
      description: 'A page of attempts.',
      schema: z
        .object({ items: z.array(deliveryAttempt), next: z.string().nullable() })
        .meta({ id: 'DeliveryAttemptPage' }),
    },
    ...READ_ERRORS,
  },
  security: 'token',
});

const replay = z
  .object({
    id: z.string().meta({ description: 'The replay.' }),
    subscriptionId: entityId,
    after: positionText.meta({ description: 'Events after this position are delivered…' }),
    until: positionText.nullable().meta({
      description:
        "…up to this one (null until the integrator takes the replay: the request's own position).",
    }),
    eventId: z.string().nullable().meta({ description: 'A redelivery of this one event (null: a replay).' }),
    queued: z.int().meta({ description: 'Deliveries queued so far.' }),
    requestedAt: z.string(),
    finishedAt: z.string().nullable().meta({ description: 'When its last delivery was queued.' }),
    status: z.enum(['requested', 'running', 'finished']),
  })
  .meta({ id: 'SubscriptionReplay' });

export const replaySubscriptionBody = z
  .strictObject({
    from: z
      .union(
        [
          // The pattern shows the spelling in the API description; `canonicalPosition` also bounds it.
          z
            .string()
            .regex(POSITION_PATTERN)
            .refine((text) => canonicalPosition(text) !== undefined),
          rfc3339Time,
        ],
        { error: `must be a position (${POSITION_TEXT_FORM}) or ${RFC_3339_TEXT_FORM}` },
      )
      .meta({
        description:
          'A position (every event from it on) or an RFC 3339 time (every event that happened from then on).',
        example: '2026-11-27T09:00:00Z',
      }),
  })
  .meta({ id: 'SubscriptionReplayRequest' });

export const replaySubscription = operation({
  operationId: 'replaySubscription',
  method: 'post',
  path: '/subscription/{subscriptionId}/replay',
  tag: 'subscriptions',
  summary: "Deliver a subscription's events again from a position or a time",
  description:
    'Every event the subscription matches, from `from` up to the moment of the request, is delivered again in ' +
    "order (per record), with the event's own `webhook-id` (as its first delivery), while new events keep flowing. Follow it with " +
    '`GET /subscription/{subscriptionId}/replay`.',
  params: subscriptionPath,
  body: { schema: replaySubscriptionBody, example: { from: '2026-11-27T09:00:00Z' } },
  responses: { 202: { description: 'The replay, requested.', schema: replay }, ...WRITE_ERRORS },
  security: 'token',
});

export const listSubscriptionReplays = operation({
  operationId: 'listSubscriptionReplays',
  method: 'get',
  path: '/subscription/{subscriptionId}/replay',
  tag: 'subscriptions',
  summary: "A subscription's replays and redeliveries, newest first",
  params: subscriptionPath,
  responses: {
    200: {
      description: 'The replays of the last 3 days and those under way.',
      schema: z.object({ items: z.array(replay) }).meta({ id: 'SubscriptionReplayList' }),
    },
    ...READ_ERRORS,
  },
  security: 'token',
});

export const redeliverSubscriptionEvent = operation({
  operationId: 'redeliverSubscriptionEvent',
  method: 'post',
  path: '/subscription/{subscriptionId}/delivery/{eventId}/redeliver',
  tag: 'subscriptions',
  summary: 'Deliver one event to a subscription again',
  description:
    "One event the log has an attempt of (the last 3 days), delivered again with the same `webhook-id`, in its record's order.",
  params: subscriptionPath.extend({ eventId: canonicalUuid.meta({ description: 'The event.' }) }),
  responses: {
    202: { description: 'The redelivery, requested.', schema: replay },
    404: { description: 'No attempt of this event to this subscription is in the log.' },
    ...WRITE_ERRORS,
  },
  security: 'token',
});

export const SUBSCRIPTION_API_OPERATIONS = [
  ...listed(SUBSCRIPTION_OPERATIONS),
  rotateSubscriptionSecret,
  listSubscriptionHistory,
  listSubscriptionDeliveries,
  redeliverSubscriptionEvent,
  replaySubscription,
  listSubscriptionReplays,
];
