/**
 * The outgoing events as the API description shows them: one OpenAPI 3.1 webhook per public event type (the
 * POST a subscription's address receives), built from the public event contracts. The AsyncAPI document
 * (`./asyncapi.ts`) describes the same messages with the same schemas.
 */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { PUBLIC_EVENT_SCHEMAS, PUBLIC_EVENT_TYPE_NAMES, PUBLIC_EVENT_TYPES } from '../public-events';

export const OUTGOING_EVENTS_TAG = 'outgoing events';

/** The Standard Webhooks headers of every delivery, with what a receiver does with each. */
export const DELIVERY_HEADERS = z.object({
  'webhook-id': z.string().meta({
    description:
      "The event's `id`: the same on every delivery of the event, so a receiver can drop duplicates.",
  }),
  'webhook-timestamp': z.string().meta({
    description:
      'When this attempt was signed, in seconds since the epoch: refuse one too far from now (replays).',
  }),
  'webhook-signature': z.string().meta({
    description:
      '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` under the subscription secret; ' +
      'while a rotated secret overlaps, one signature per secret, separated by a space. Verify it with a ' +
      'Standard Webhooks library.',
  }),
});

export const DELIVERED_DESCRIPTION = 'Delivered: any 2xx status.';
export const RETRIED_DESCRIPTION =
  'Any other status (3xx included: redirects are not followed), a timeout or a refused connection: the ' +
  'delivery is retried with exponential backoff and jitter for up to 3 days, the same `webhook-id` each time.';

/** The `webhooks` of the OpenAPI document: the POST each public event type makes to a subscription's address. */
export function outgoingEventWebhooks(): ZodOpenApiPathsObject {
  return Object.fromEntries(
    PUBLIC_EVENT_TYPE_NAMES.map((type) => [
      type,
      {
        post: {
          tags: [OUTGOING_EVENTS_TAG],
          summary: `${type}: ${PUBLIC_EVENT_TYPES[type]}`,
          description:
            'POSTed to the address of each subscription that asked for it, in order per record, at least once, signed as Standard Webhooks says.',
          requestParams: { header: DELIVERY_HEADERS },
          requestBody: {
            required: true,
            content: { 'application/json': { schema: PUBLIC_EVENT_SCHEMAS[type] } },
          },
          responses: {
            '2XX': { description: DELIVERED_DESCRIPTION },
            default: { description: RETRIED_DESCRIPTION },
          },
        },
      },
    ]),
  );
}
