import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** A REST request of a tool call, and the answer it got. */
export interface ApiRequest {
  readonly method: string;
  /** Path and query, from the host's root (`/api/record?limit=1`). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}
export interface ApiAnswer {
  readonly status: number;
  readonly body: string;
}

/** The largest answer a tool call reads (a list page of 1,000 large records fits). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/**
 * Sends a tool call's REST request to the API at `origin` over HTTP, through every layer a client's request
 * passes (tenant, authentication, metering, routing, validation). The origin is the platform itself (the
 * address the MCP request came in on) or, where this process does not serve both APIs, `MCP_API_URL`.
 */
export function callApi(origin: URL, request: ApiRequest, timeoutMs: number): Promise<ApiAnswer> {
  const secure = origin.protocol === 'https:';
  const send = secure ? httpsRequest : httpRequest;
  return new Promise<ApiAnswer>((resolve, reject) => {
    const call = send(
      new URL(request.url, origin),
      {
        method: request.method,
        headers: request.headers,
        timeout: timeoutMs,
        agent: secure ? agents.https : agents.http,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            response.destroy(new Error(`the API answered more than ${MAX_ANSWER_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 502, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    call.on('timeout', () => call.destroy(new Error(`the API did not answer within ${timeoutMs} ms`)));
    call.on('error', reject);
    call.end(request.body);
  });
}
