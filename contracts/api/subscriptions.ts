/**
 * Outgoing subscriptions: who is told about which public events, where, and the secret deliveries are signed
 * with (Standard Webhooks). Delivery itself is not built yet.
 */
import { z } from 'zod';
import {
  DEFAULT_SECRET_OVERLAP_MINUTES,
  MAX_SECRET_OVERLAP_MINUTES,
  subscriptionSettingsShape,
} from '../subscriptions';
import { updateOf } from './catalogue';
import { auditPage } from './files';
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

export const SUBSCRIPTION_API_OPERATIONS = [
  ...listed(SUBSCRIPTION_OPERATIONS),
  rotateSubscriptionSecret,
  listSubscriptionHistory,
];
