/**
 * Outgoing subscriptions: what a subscriber sets (`/subscription`) and the bounds of it. The catalogue of
 * event types it may ask for is `public-events.ts`.
 */
import { z } from 'zod';
import { MAX_FILTER_LENGTH } from '../languages/filter/parse';
import { PUBLIC_EVENT_TYPE_NAMES, PUBLIC_EVENT_TYPES } from './public-events';

export const MAX_SUBSCRIPTION_NAME_LENGTH = 200;
export const MAX_SUBSCRIPTION_URL_LENGTH = 2048;
/** Every catalogue type fits: more would only be repeats. */
export const MAX_SUBSCRIPTION_EVENTS = PUBLIC_EVENT_TYPE_NAMES.length;
export const MAX_SUBSCRIPTION_HEADERS = 20;
export const MAX_HEADER_NAME_LENGTH = 64;
export const MAX_HEADER_VALUE_LENGTH = 1024;
/** How long a rotated-out secret keeps signing, by default and at most. */
export const DEFAULT_SECRET_OVERLAP_MINUTES = 24 * 60;
export const MAX_SECRET_OVERLAP_MINUTES = 7 * 24 * 60;

/**
 * Headers a subscription may not set: hop-by-hop ones (they describe one connection, not the delivery), the
 * ones the delivery computes (`host`, `content-length`) and the Standard Webhooks signature headers (a
 * receiver must be able to trust them). `webhook-*` as a whole is refused too.
 */
export const FORBIDDEN_SUBSCRIPTION_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

/**
 * Letters, digits, `-` and `_`: every header name in use, and none of the token characters (`.`, `$`) a
 * document store reads as a path inside the `headers` map.
 */
const HEADER_NAME = /^[A-Za-z0-9_-]+$/;
/** A header value without control characters (a CR or LF would start another header). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Why `name` may not be an extra header of a subscription (undefined: it may). */
export function headerNameProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > MAX_HEADER_NAME_LENGTH)
    return `must be 1 to ${MAX_HEADER_NAME_LENGTH} characters`;
  if (!HEADER_NAME.test(name)) return 'may have only letters, digits, - and _';
  const lower = name.toLowerCase();
  if (lower.startsWith('webhook-')) return 'is a signature header the delivery sets (webhook-*)';
  if (FORBIDDEN_SUBSCRIPTION_HEADERS.has(lower)) return 'is set by the delivery or is hop-by-hop';
  return undefined;
}

const knownTypes: ReadonlySet<string> = new Set(PUBLIC_EVENT_TYPE_NAMES);

export const subscriptionEventsSchema = z
  .array(z.string().max(100))
  .min(1, 'name at least one event type')
  .max(MAX_SUBSCRIPTION_EVENTS, `at most ${MAX_SUBSCRIPTION_EVENTS} event types`)
  .superRefine((types, ctx) => {
    const unknown = types.filter((type) => !knownTypes.has(type));
    if (unknown.length > 0)
      ctx.addIssue({
        code: 'custom',
        message: `unknown event types: ${unknown.join(', ')} (known: ${PUBLIC_EVENT_TYPE_NAMES.join(', ')})`,
      });
    const repeated = types.filter((type, index) => types.indexOf(type) !== index);
    if (repeated.length > 0)
      ctx.addIssue({ code: 'custom', message: `event types named twice: ${repeated.join(', ')}` });
  })
  .meta({
    description: `Public event types to deliver: ${Object.keys(PUBLIC_EVENT_TYPES)
      .map((type) => `\`${type}\``)
      .join(', ')}.`,
  });

export const subscriptionHeadersSchema = z
  .record(
    z.string(),
    z.string().max(MAX_HEADER_VALUE_LENGTH, `at most ${MAX_HEADER_VALUE_LENGTH} characters`),
  )
  .superRefine((headers, ctx) => {
    const names = Object.keys(headers);
    if (names.length > MAX_SUBSCRIPTION_HEADERS)
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_SUBSCRIPTION_HEADERS} headers` });
    const seen = new Set<string>();
    for (const name of names) {
      const problem = headerNameProblem(name);
      if (problem !== undefined)
        ctx.addIssue({ code: 'custom', path: [name], message: `header "${name}" ${problem}` });
      if (seen.has(name.toLowerCase()))
        ctx.addIssue({ code: 'custom', path: [name], message: `header "${name}" is given twice` });
      seen.add(name.toLowerCase());
      if (!HEADER_VALUE.test(headers[name]!))
        ctx.addIssue({ code: 'custom', path: [name], message: `header "${name}" has control characters` });
    }
  })
  .meta({
    description:
      `Extra headers sent with every delivery (at most ${MAX_SUBSCRIPTION_HEADERS}; names ≤ ${MAX_HEADER_NAME_LENGTH}, ` +
      `values ≤ ${MAX_HEADER_VALUE_LENGTH} characters). Hop-by-hop headers, \`host\`, \`content-length\` and ` +
      '`webhook-*` are refused. Values are sealed at rest and write-only: reads show only `headerNames`.',
  });

export const subscriptionUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
  .max(MAX_SUBSCRIPTION_URL_LENGTH)
  .meta({
    description:
      'Where deliveries are POSTed. Private, loopback, link-local and metadata addresses are refused (unless ' +
      'the platform runs with `OUTBOUND_ALLOW_PRIVATE`): a literal address or `localhost` here, a name that ' +
      'resolves to one at delivery.',
  });

export const subscriptionFilterSchema = z
  .string()
  .max(MAX_FILTER_LENGTH)
  .nullable()
  .meta({
    description:
      'The list language, applied to the record as it is after the event (e.g. `moduleId=7;status=open`); ' +
      'null or empty: every event of the types named.',
  });

export const subscriptionSettingsShape = {
  name: z.string().trim().min(1).max(MAX_SUBSCRIPTION_NAME_LENGTH),
  url: subscriptionUrlSchema,
  events: subscriptionEventsSchema,
  filter: subscriptionFilterSchema,
  headers: subscriptionHeadersSchema,
};
export const subscriptionSettingsSchema = z.object(subscriptionSettingsShape);
export type SubscriptionSettings = z.infer<typeof subscriptionSettingsSchema>;

/** A signing secret as Standard Webhooks writes it: `whsec_` and the base64 of its bytes. */
export const SIGNING_SECRET_PREFIX = 'whsec_';
