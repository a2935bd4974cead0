import type { WebhookRequestReceivedData } from '../../contracts/events/integrator';

/** An accepted hook request as its event holds it: a small POST that runs at once in scenario 9 of hook 4. */
export function receivedRequest(
  requestId: string,
  overrides: Partial<WebhookRequestReceivedData> = {},
): WebhookRequestReceivedData {
  return {
    webhookId: 4,
    requestId,
    scenarioId: 9,
    receivedAt: '2026-11-27T10:00:00.000Z',
    method: 'POST',
    bytes: 2,
    queued: false,
    sequential: false,
    awaitsResponse: false,
    bundle: {},
    payloadBytes: 2,
    ...overrides,
  };
}

/** The fields of a file in a data structure: a hook puts each file it receives in the bundle so. */
export const FILE_FIELDS = [
  { name: 'name', type: 'text' },
  { name: 'mime', type: 'text' },
  { name: 'data', type: 'buffer' },
] as const;
