/**
 * The platform's public address: configured (PUBLIC_URL, an origin of BASE_HOST) or BASE_HOST with the port
 * the request came in on; a system's is its subdomain. No part of it comes from the request's headers.
 */
import type { Request } from 'express';
import fc from 'fast-check';
import { loadConfig } from '../../infra/config';
import { PublicAddress } from '../../infra/http/public-address';

/** A request as the address sees it: the port it came in on, and any Host header at all. */
function requestOn(localPort: number, host: string): Request {
  return {
    socket: { localPort },
    headers: { host },
    get: () => host,
    protocol: 'https',
  } as unknown as Request;
}

describe('PublicAddress', () => {
  it('given PUBLIC_URL, then it and its systems’ subdomains, whatever the Host', () => {
    const address = new PublicAddress('https://records.example.com', 'records.example.com');
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 65535 }), (host, port) => {
        const req = requestOn(port, host);
        expect(address.origin(req).origin).toBe('https://records.example.com');
        expect(address.systemOrigin(req, 'acme').origin).toBe('https://acme.records.example.com');
      }),
    );
    expect(
      new PublicAddress('https://records.example.com:8443', 'records.example.com').origin(
        requestOn(3000, 'x'),
      ).origin,
    ).toBe('https://records.example.com:8443');
  });

  it('given no PUBLIC_URL, then BASE_HOST with the port the request came in on, whatever the Host', () => {
    const address = new PublicAddress(undefined, 'localhost');
    fc.assert(
      fc.property(fc.string(), (host) => {
        const req = requestOn(4321, host);
        expect(address.origin(req).origin).toBe('http://localhost:4321');
        expect(address.systemOrigin(req, 'test').origin).toBe('http://test.localhost:4321');
      }),
    );
  });
});

describe('configuration of the public address and the shared caps', () => {
  it('PUBLIC_URL is an origin of BASE_HOST', () => {
    expect(
      loadConfig({ BASE_HOST: 'records.example.com', PUBLIC_URL: 'https://records.example.com' }).PUBLIC_URL,
    ).toBe('https://records.example.com');
    expect(() =>
      loadConfig({ BASE_HOST: 'records.example.com', PUBLIC_URL: 'https://evil.example' }),
    ).toThrow('PUBLIC_URL must be an address of BASE_HOST');
    for (const url of ['https://localhost/api', 'https://localhost/?x=1', 'ftp://localhost', 'localhost'])
      expect(() => loadConfig({ PUBLIC_URL: url })).toThrow('PUBLIC_URL');
  });

  it('the MCP session shares and the SMTP per-sender share have bounded defaults', () => {
    const config = loadConfig({});
    expect([
      config.MCP_SESSIONS_PER_CREDENTIAL,
      config.MCP_SESSIONS_PER_USER,
      config.MCP_SESSIONS_PER_SYSTEM,
      config.MCP_MAX_SESSIONS,
      config.MCP_SESSION_IDLE_SECONDS,
      config.SMTP_MAX_CLIENTS_PER_ADDRESS,
      config.SMTP_MAX_CLIENTS,
    ]).toEqual([16, 32, 200, 2000, 1800, 20, 200]);
    for (const name of [
      'MCP_SESSIONS_PER_SYSTEM',
      'MCP_SESSION_IDLE_SECONDS',
      'SMTP_MAX_CLIENTS_PER_ADDRESS',
    ])
      expect(() => loadConfig({ [name]: '0' })).toThrow(name);
  });
});
