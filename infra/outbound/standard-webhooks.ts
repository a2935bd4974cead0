/**
 * Signing an outgoing delivery as the Standard Webhooks specification says, with its reference
 * implementation (`standardwebhooks`), so receivers can verify it with the library of their language.
 */
import { Webhook } from 'standardwebhooks';

export interface SigningSecrets {
  /** The subscription's secret, as shown to its owner (`whsec_` and base64). */
  readonly current: string;
  /** The secret it replaced, while a rotation's overlap lasts: receivers may still hold only that one. */
  readonly previous?: string;
}

export interface StandardWebhookHeaders {
  readonly 'webhook-id': string;
  /** Seconds since the epoch. */
  readonly 'webhook-timestamp': string;
  /** `v1,<base64>`; during a rotation one per secret, separated by a space, as the specification allows. */
  readonly 'webhook-signature': string;
}

/** The three headers of a delivery of `body` (the exact bytes sent) as message `messageId` at `sentAt`. */
export function signedHeaders(
  secrets: SigningSecrets,
  messageId: string,
  sentAt: Date,
  body: string,
): StandardWebhookHeaders {
  const keys = secrets.previous === undefined ? [secrets.current] : [secrets.current, secrets.previous];
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': keys.map((key) => new Webhook(key).sign(messageId, sentAt, body)).join(' '),
  };
}
