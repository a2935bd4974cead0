import { randomUUID } from 'node:crypto';
import type { ConsumedMessage, Consumer, Stream } from '../../infra/stream/port';

/** A consumer of the events topic, started before the platform so it sees everything the relay sends. */
export class Collector {
  readonly messages: ConsumedMessage[] = [];
  private consumer: Consumer | undefined;
  private check: () => void = () => undefined;

  async start(stream: Stream, topic: string): Promise<void> {
    this.consumer = await stream.consume({
      topic,
      group: `relay-test-${randomUUID()}`,
      fromBeginning: true,
      handle: async (message) => {
        this.messages.push(message);
        this.check();
      },
    });
  }

  /** Resolves once `done` holds for the messages seen (or after the timeout, to let the test say what came). */
  until(done: (messages: readonly ConsumedMessage[]) => boolean, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.check = () => {
        if (done(this.messages)) {
          clearTimeout(timer);
          resolve();
        }
      };
      this.check();
    });
  }

  async stop(): Promise<void> {
    await this.consumer?.stop();
  }
}
