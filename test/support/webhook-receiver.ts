import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { polling } from './eventually';

const eventually = polling(20_000);

/** One request a receiver got. */
export interface Received {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly at: number;
}

/** How a path answers: a status and body, or no answer at all (the connection is held open). */
export type Answer =
  | {
      readonly status: number;
      readonly body?: string;
      readonly headers?: Record<string, string>;
      /** Answers after this long (a receiver that takes its time). */
      readonly delayMs?: number;
    }
  /** No answer at all: the connection is held open. */
  | 'hang'
  /** 200 and a body that never ends (until the caller goes away). */
  | 'flood';

export interface WebhookReceiver {
  /** The address of one path on this receiver (a subscription's URL). */
  url(path: string): string;
  /** How `path` answers from now on (default 200 `ok`); a function decides per request. */
  answer(path: string, answer: Answer | ((received: Received) => Answer)): void;
  received(path: string): Received[];
  /** Waits until `path` got at least `count` requests, and answers them. */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A receiver of webhooks on loopback, as a subscriber would run one, recording everything it gets. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const got = new Map<string, Received[]>();
  const answers = new Map<string, Answer | ((received: Received) => Answer)>();
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers))
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      const received: Received = {
        path,
        headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      got.set(path, [...(got.get(path) ?? []), received]);
      const configured = answers.get(path) ?? { status: 200, body: 'ok' };
      const answer = typeof configured === 'function' ? configured(received) : configured;
      if (answer === 'hang') return;
      if (answer === 'flood') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'y');
        const more = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', more);
        };
        res.on('close', () => res.removeAllListeners('drain'));
        more();
        return;
      }
      const send = () => {
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        res.end(answer.body ?? '');
      };
      if (answer.delayMs === undefined) send();
      else setTimeout(send, answer.delayMs);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    answer: (path, answer) => void answers.set(path, answer),
    received: (path) => [...(got.get(path) ?? [])],
    async waitFor(path, count, timeoutMs) {
      const have = await eventually(
        () => Promise.resolve([...(got.get(path) ?? [])]),
        (requests) => requests.length >= count,
        timeoutMs,
      );
      if (have.length < count) throw new Error(`${path} got ${have.length} of ${count} requests`);
      return have;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
