import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local HTTP server that holds every request unanswered until it is let go: a slow step's other end. */
export interface HeldServer {
  readonly url: string;
  /** Requests held unanswered now. */
  readonly held: number;
  /** Requests it received in all. */
  readonly calls: number;
  /** Answers the held requests with `body` (or drops them, as a dead peer would), and every later one at once. */
  release(how: { readonly body: string } | 'drop'): void;
  close(): Promise<void>;
}

export async function startHeldServer(path = '/slow'): Promise<HeldServer> {
  const held: ServerResponse[] = [];
  let calls = 0;
  let answer: string | undefined;
  const server = createServer((_request, response) => {
    calls += 1;
    if (answer === undefined) held.push(response);
    else response.end(answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const release = (how: { readonly body: string } | 'drop'): void => {
    answer = how === 'drop' ? '{}' : how.body;
    for (const response of held.splice(0))
      if (how === 'drop') response.destroy();
      else response.end(how.body);
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    get held() {
      return held.length;
    },
    get calls() {
      return calls;
    },
    release,
    close() {
      release('drop');
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
