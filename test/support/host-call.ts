import { request, type Agent, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';

export interface HostAnswer {
  status: number;
  text: string;
  headers: IncomingHttpHeaders;
}

/**
 * One request to the platform at `url` with this Host header, which selects the system (fetch drops it, so
 * this speaks HTTP through node:http); `path` is the whole path.
 */
export function requestAsHost(
  url: string,
  host: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string; agent?: Agent | false } = {},
): Promise<HostAnswer> {
  const { port } = new URL(url);
  const { headers = {}, body, agent } = options;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        ...(agent !== undefined && { agent }),
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          Host: host,
          ...(body !== undefined && { 'Content-Type': 'application/json' }),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: headersOf(res) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** One API call to the platform at `url` as system `host`, with a token. */
export function callHost(
  url: string,
  host: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  agent?: Agent,
): Promise<HostAnswer> {
  return requestAsHost(url, host, method, `/api${path}`, {
    headers: { Authorization: `Bearer ${token}` },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    ...(agent && { agent }),
  });
}

/**
 * The answer's headers by lower-case name. Node's `res.headers` is a plain object, where a header named
 * `__proto__` (a hook's response may set any name) cannot be read back: this one has no prototype.
 */
function headersOf(res: IncomingMessage): IncomingHttpHeaders {
  const headers = Object.assign(Object.create(null) as IncomingHttpHeaders, res.headers);
  for (let index = 0; index < res.rawHeaders.length; index += 2)
    if (res.rawHeaders[index]!.toLowerCase() === '__proto__')
      headers['__proto__'] = res.rawHeaders[index + 1];
  return headers;
}
