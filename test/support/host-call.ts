import { request, type Agent, type IncomingHttpHeaders } from 'node:http';

export interface HostAnswer {
  status: number;
  text: string;
  headers: IncomingHttpHeaders;
}

/**
 * One API call to the platform at `url` as system `host` (the system is chosen by the Host header, which fetch
 * drops, so this speaks HTTP through node:http).
 */
export function callHost(
  url: string,
  host: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  agent?: Agent,
): Promise<HostAnswer> {
  const { port } = new URL(url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        ...(agent && { agent }),
        host: '127.0.0.1',
        port,
        method,
        path: `/api${path}`,
        headers: {
          Host: host,
          Authorization: `Bearer ${token}`,
          ...(payload !== undefined && { 'Content-Type': 'application/json' }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
