/**
 * The platform's public address: configured (PUBLIC_URL, an origin of BASE_HOST) or BASE_HOST with the port
 * the request came in on; a system's is its subdomain. No part of it comes from the request's headers.
 */
import type { Request } from 'express';
import fc from 'fast-check';
import { loadConfig } from '../../infra/config';
import { PublicAddress } from '../../infra/http/public-address';

/** A request as the address sees it: the connection's local address and port, and any Host header. */
function requestOn(localPort: number, host: string | undefined, localAddress = '10.0.0.5'): Request {
  return { socket: { localPort, localAddress }, headers: { host }, protocol: 'http' } as unknown as Request;
}

/** Host headers that are not the platform's: every one must give way to the public address. */
const foreignHost = fc.oneof(
  fc.constantFrom(
    'evil.example',
    'evil.example:443',
    'records.example.com.evil.example',
    'records.example.com:1@evil.example',
    'records.example.com/evil',
    'acme.records.example.com:8443',
    'a.b.records.example.com',
    'Bad_Name.records.example.com',
    '10.0.0.5:3000',
    '',
  ),
  fc.domain(),
  fc.string(),
);

describe('PublicAddress', () => {
  describe('given PUBLIC_URL', () => {
    const address = new PublicAddress('https://records.example.com', 'records.example.com', 'test');

    it('any Host that is not one of its names gives the configured address, and a system its subdomain', () => {
      fc.assert(
        fc.property(foreignHost, (host) => {
          const req = requestOn(3000, host);
          expect(address.origin(req)).toBe('https://records.example.com');
          expect(address.originOf(req, 'acme')).toBe('https://acme.records.example.com');
          expect(address.originOf(req, 'test')).toBe('https://records.example.com');
        }),
        { numRuns: 300 },
      );
    });

    it('its own names, as a client reached them, are kept', () => {
      const viaAcme = requestOn(3000, 'ACME.records.example.com');
      expect(address.origin(viaAcme)).toBe('https://acme.records.example.com');
      expect(address.originOf(viaAcme, 'acme')).toBe('https://acme.records.example.com');
      // Another system's address is never the one reached through acme's name.
      expect(address.originOf(viaAcme, 'globex')).toBe('https://globex.records.example.com');
      expect(address.originOf(requestOn(3000, 'records.example.com:443'), 'test')).toBe(
        'https://records.example.com',
      );
    });
  });

  describe('given no PUBLIC_URL', () => {
    const address = new PublicAddress(undefined, 'localhost', 'test');

    it('any foreign Host gives BASE_HOST with the port the request came in on', () => {
      fc.assert(
        fc.property(foreignHost, (host) => {
          const req = requestOn(4321, host);
          expect(address.origin(req)).toBe('http://localhost:4321');
          expect(address.originOf(req, 'acme')).toBe('http://acme.localhost:4321');
        }),
        { numRuns: 300 },
      );
    });

    it("the connection's own address and port, or BASE_HOST's names with that port, are kept", () => {
      expect(address.origin(requestOn(4321, '10.0.0.5:4321'))).toBe('http://10.0.0.5:4321');
      expect(address.originOf(requestOn(4321, '10.0.0.5:4321'), 'test')).toBe('http://10.0.0.5:4321');
      expect(address.originOf(requestOn(4321, '10.0.0.5:4321'), 'acme')).toBe('http://acme.localhost:4321');
      expect(address.origin(requestOn(4321, '[::1]:4321', '::1'))).toBe('http://[::1]:4321');
      expect(address.origin(requestOn(4321, '127.0.0.1:4321', '::ffff:127.0.0.1'))).toBe(
        'http://127.0.0.1:4321',
      );
      expect(address.originOf(requestOn(4321, 'acme.localhost:4321'), 'acme')).toBe(
        'http://acme.localhost:4321',
      );
      // The right name with another port is no name of this platform.
      expect(address.origin(requestOn(4321, 'localhost:6666'))).toBe('http://localhost:4321');
    });
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
