import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { signedHeaders, type StandardWebhookHeaders } from '../../infra/outbound/standard-webhooks';

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
const body = JSON.stringify({ id: 'evt-1', type: 'label.deleted', data: { labelId: 2 } });

/** What a receiver does with the Standard Webhooks library: verify, or be refused. */
const verify = (secret: string, payload: string, headers: StandardWebhookHeaders) =>
  new Webhook(secret).verify(payload, { ...headers });

describe('signing a delivery as Standard Webhooks says', () => {
  test('with one secret: the receiver verifies the body, id and timestamp with it', () => {
    const secret = newSecret();
    const sentAt = new Date();
    const headers = signedHeaders({ current: secret }, 'evt-1', sentAt, body);
    expect(headers['webhook-id']).toBe('evt-1');
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(sentAt.getTime() / 1000)));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(verify(secret, body, headers)).toEqual(JSON.parse(body));
  });

  test('during a rotation both secrets sign: a receiver holding either one verifies', () => {
    const current = newSecret();
    const previous = newSecret();
    const headers = signedHeaders({ current, previous }, 'evt-1', new Date(), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verify(current, body, headers)).toEqual(JSON.parse(body));
    expect(verify(previous, body, headers)).toEqual(JSON.parse(body));
    expect(() => verify(newSecret(), body, headers)).toThrow(WebhookVerificationError);
  });

  test('a changed body, or another message id, is refused', () => {
    const secret = newSecret();
    const headers = signedHeaders({ current: secret }, 'evt-1', new Date(), body);
    expect(() => verify(secret, body.replace('2', '3'), headers)).toThrow(WebhookVerificationError);
    expect(() => verify(secret, body, { ...headers, 'webhook-id': 'evt-2' })).toThrow(
      WebhookVerificationError,
    );
  });

  test('a timestamp outside the receiver’s tolerance (5 minutes) is refused, too old or too new', () => {
    const secret = newSecret();
    for (const offsetMs of [-10 * 60_000, 10 * 60_000]) {
      const headers = signedHeaders({ current: secret }, 'evt-1', new Date(Date.now() + offsetMs), body);
      expect(() => verify(secret, body, headers)).toThrow(/timestamp too (old|new)/);
    }
  });
});
