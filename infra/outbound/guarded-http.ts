import { lookup } from 'node:dns/promises';
import { request as httpRequest, validateHeaderName, validateHeaderValue } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import { OutboundError, type OutboundHttp, type OutboundRequest, type OutboundResponse } from './port';

export const MAX_RESPONSE_BYTES = 64 * 1024;

/** Private, loopback, link-local (cloud metadata), carrier-grade NAT, unspecified and multicast ranges. */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');

/** Whether an address is outside the public internet (an IPv4-mapped IPv6 address counts as its IPv4). */
export function isNonPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return NON_PUBLIC.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface GuardedHttpOptions {
  /** Allow private and loopback addresses (local development and tests only). */
  readonly allowNonPublic: boolean;
  readonly timeoutMs: number;
  /** Name resolution; the platform's resolver by default. */
  readonly resolve?: (hostname: string) => Promise<string[]>;
}

async function systemResolve(hostname: string): Promise<string[]> {
  return (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);
}

/**
 * The address to call, once it and every header are ones HTTP allows: what users compute (a scenario's
 * expression) is refused as the call's own fault, before anything is sent, rather than thrown by node as an
 * error nobody expects.
 */
function checkedTarget(url: string, headers: Readonly<Record<string, string>>): URL {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new OutboundError('invalid-request', `${JSON.stringify(url.slice(0, 200))} is not an address`);
  }
  for (const [name, value] of Object.entries(headers)) {
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch (error) {
      throw new OutboundError(
        'invalid-request',
        `the header ${JSON.stringify(name.slice(0, 100))} cannot be sent: ${(error as Error).message}`,
      );
    }
  }
  return target;
}

/**
 * Outbound HTTP behind an SSRF guard: the host is resolved once, every address it resolves to must be
 * public (unless allowed), and the connection goes to that pinned address (so a second, different answer
 * from DNS cannot redirect it). Redirects are returned, not followed; answers are cut at 64 KB.
 */
export function guardedHttp(options: GuardedHttpOptions): OutboundHttp {
  const resolve = options.resolve ?? systemResolve;
  const request = async ({
    method,
    url,
    headers = {},
    body,
    timeoutMs = options.timeoutMs,
    maxBytes = MAX_RESPONSE_BYTES,
  }: OutboundRequest): Promise<OutboundResponse> => {
    const target = checkedTarget(url, headers);
    if (target.protocol !== 'https:' && target.protocol !== 'http:')
      throw new OutboundError('refused-address', `only http(s) addresses are called, not ${target.protocol}`);
    const hostname = target.hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    try {
      addresses = isIP(hostname) ? [hostname] : await resolve(hostname);
    } catch (error) {
      throw new OutboundError('unreachable', `${hostname} does not resolve: ${String(error)}`);
    }
    if (addresses.length === 0) throw new OutboundError('unreachable', `${hostname} does not resolve`);
    if (!options.allowNonPublic && addresses.some(isNonPublicAddress))
      throw new OutboundError('refused-address', `${hostname} resolves to a private or reserved address`);
    const pinned = addresses[0]!;
    const payload = body ?? '';
    const sendsBody = body !== undefined || method === 'POST';
    const started = performance.now();
    return new Promise<OutboundResponse>((resolveCall, reject) => {
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        outcome();
      };
      const call = send(
        target,
        {
          method,
          headers: {
            ...headers,
            ...(sendsBody && { 'content-length': String(Buffer.byteLength(payload)) }),
          },
          // Connect to the address checked above, whatever DNS would answer now.
          lookup: (_host, lookupOptions, callback) => {
            const family = isIP(pinned);
            if ((lookupOptions as { all?: boolean }).all) callback(null, [{ address: pinned, family }]);
            else callback(null, pinned, family);
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const answer = (): OutboundResponse => {
            const raw = Buffer.concat(chunks);
            return {
              status: response.statusCode ?? 0,
              body: raw.toString('utf8'),
              raw,
              truncated: size > maxBytes,
              headers: headersOf(response.headers),
              durationMs: performance.now() - started,
            };
          };
          response.on('data', (chunk: Buffer) => {
            chunks.push(chunk.subarray(0, Math.max(0, maxBytes - size)));
            size += chunk.length;
            // The rest of a long answer is not wanted: stop reading it rather than wait for its end.
            if (size > maxBytes) {
              settle(() => resolveCall(answer()));
              call.destroy();
            }
          });
          response.on('end', () => settle(() => resolveCall(answer())));
          response.on('error', (error) =>
            settle(() => reject(new OutboundError('unreachable', error.message))),
          );
        },
      );
      // One deadline for the whole call: a server that answers a byte at a time is never idle, yet too slow.
      const deadline = setTimeout(() => {
        settle(() =>
          reject(new OutboundError('timeout', `${target.host} did not answer within ${timeoutMs} ms`)),
        );
        call.destroy();
      }, timeoutMs);
      call.on('error', (error) => settle(() => reject(new OutboundError('unreachable', error.message))));
      call.end(sendsBody ? payload : undefined);
    });
  };
  return {
    request,
    postJson: (url, body) =>
      request({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
  };
}

function headersOf(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}
