import { messageBytes } from '../../infra/stream/port';
import { toStreamMessage } from '../../projections/relay';
import { EventLog, TEST_TENANT } from '../support/given-when-then';

/** What the relay publishes for an event: whole when the stream takes it, else without its data. */
const log = new EventLog();
const eventOf = (text: string) =>
  log.record(`hookRequest-${TEST_TENANT}.r1`, {
    type: 'ScenarioRunErrored',
    data: { runId: 'r1', at: '2026-11-27T10:00:00.000Z', message: text },
  });

test('an event the stream takes is relayed whole', () => {
  const event = eventOf('small');
  const message = toStreamMessage(event, 10_000);
  expect(JSON.parse(message.value)).toMatchObject({ id: event.id, data: event.data });
  expect(message.headers?.dataOmitted).toBeUndefined();
});

test('an event larger than the stream takes is relayed without its data, saying so, within the limit', () => {
  const event = eventOf('x'.repeat(50_000));
  const message = toStreamMessage(event, 10_000);
  expect(messageBytes(message)).toBeLessThanOrEqual(10_000);
  expect(message.headers).toMatchObject({ type: 'ScenarioRunErrored', dataOmitted: 'true' });
  expect(JSON.parse(message.value)).toMatchObject({
    id: event.id,
    streamId: event.streamId,
    revision: String(event.revision),
    position: String(event.position),
    data: null,
    dataOmitted: true,
  });
  expect(message.key).toBe(toStreamMessage(event).key);
});
