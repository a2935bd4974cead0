import { createKafkaStream } from '../../infra/stream/kafka';
import type { Stream } from '../../infra/stream/port';
import { describeContract, type AdapterRun } from '../support/adapter-report';
import { streamContract } from './stream';

const brokers = (process.env.KAFKA_BROKERS ?? '')
  .split(',')
  .map((broker) => broker.trim())
  .filter((broker) => broker.length > 0);

const run: AdapterRun =
  brokers.length > 0
    ? { kind: 'real-server', where: brokers.join(',') }
    : { kind: 'skipped', reason: 'KAFKA_BROKERS not set' };

describeContract('stream', 'kafka', run, () => {
  streamContract(async () => {
    const opened: Stream[] = [];
    const open = (): Stream => {
      const stream = createKafkaStream({ brokers, clientId: 'stream-contract' });
      opened.push(stream);
      return stream;
    };
    return {
      stream: open(),
      reopen: async () => open(),
      cleanup: async () => {
        await Promise.all(opened.map((stream) => stream.close()));
      },
    };
  });
});
