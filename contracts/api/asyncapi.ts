/**
 * The AsyncAPI 3 document of the outgoing events: the messages a subscription's address receives, one per
 * public event type. Its schemas are the ones the OpenAPI document's `webhooks` carry, made by the same
 * generator from the same contracts, so the two documents cannot disagree.
 */
import { createDocument } from 'zod-openapi';
import {
  PUBLIC_EVENT_SCHEMA_VERSION,
  PUBLIC_EVENT_TYPE_NAMES,
  PUBLIC_EVENT_TYPES,
  publicEventSchemaId,
} from '../public-events';
import {
  DELIVERED_DESCRIPTION,
  DELIVERY_HEADERS,
  outgoingEventWebhooks,
  RETRIED_DESCRIPTION,
} from './outgoing-events';

const CHANNEL = 'subscription';
const HEADERS_SCHEMA = 'DeliveryHeaders';

/** The component schemas of the public events (and their delivery headers), as the OpenAPI document has them. */
function eventSchemas(version: string) {
  const openapi = createDocument({
    openapi: '3.1.0',
    info: { title: 'outgoing events', version },
    webhooks: outgoingEventWebhooks(),
    components: { schemas: { [HEADERS_SCHEMA]: DELIVERY_HEADERS } },
  });
  return openapi.components?.schemas ?? {};
}

/** The AsyncAPI 3.1 document of the outgoing events, for the API version `version`. */
export function buildAsyncApiDocument(version: string) {
  const messageRef = (type: string) => ({ $ref: `#/components/messages/${type}` });
  return {
    asyncapi: '3.1.0',
    info: {
      title: 'Records Platform outgoing events',
      version,
      description:
        'What a subscription (`/subscription`) receives: each public event it asked for, POSTed to its address as ' +
        '`{id, type, occurredAt, system, position, data}` and signed as the Standard Webhooks specification says. ' +
        `This is version ${PUBLIC_EVENT_SCHEMA_VERSION} of the public event schema: internal events may change shape, ` +
        'but are lifted to the published one; within a version `data` only gains optional members.',
    },
    defaultContentType: 'application/json',
    channels: {
      [CHANNEL]: {
        address: null,
        title: "A subscription's address",
        description:
          'The `url` of each subscription: it differs per subscription, so the channel has no fixed address.',
        messages: Object.fromEntries(PUBLIC_EVENT_TYPE_NAMES.map((type) => [type, messageRef(type)])),
      },
    },
    operations: {
      deliverEvent: {
        action: 'send',
        channel: { $ref: `#/channels/${CHANNEL}` },
        summary: 'The platform POSTs each event a subscription asked for to its address.',
        description: `At least once, in order per record. ${DELIVERED_DESCRIPTION} ${RETRIED_DESCRIPTION}`,
        bindings: { http: { method: 'POST' } },
        messages: PUBLIC_EVENT_TYPE_NAMES.map((type) => ({ $ref: `#/channels/${CHANNEL}/messages/${type}` })),
      },
    },
    components: {
      messages: Object.fromEntries(
        PUBLIC_EVENT_TYPE_NAMES.map((type) => [
          type,
          {
            name: type,
            title: type,
            summary: PUBLIC_EVENT_TYPES[type],
            contentType: 'application/json',
            headers: { $ref: `#/components/schemas/${HEADERS_SCHEMA}` },
            payload: { $ref: `#/components/schemas/${publicEventSchemaId(type)}` },
          },
        ]),
      ),
      schemas: eventSchemas(version),
    },
  };
}
