/**
 * The mailhook SMTP listener's connections, shared out by sender: one address (an IPv6 /64) holds at most its
 * share, others still connect, and a closed connection gives its place back. Senders are told apart with
 * the PROXY protocol header a TCP proxy sends, so one test host can be many senders.
 */
import fc from 'fast-check';
import { createLogger } from '../../infra/logging';
import { addressShareOf } from '../../infra/smtp/address-share';
import { startMailListener, type MailListener } from '../../infra/smtp/mail-listener';
import { RawSmtp, type SmtpAnswer } from '../support/smtp-client';

const PER_ADDRESS = 3;
const TOTAL = 8;
let listener: MailListener;

function listen(): Promise<MailListener> {
  return startMailListener(
    {
      recipient: () => Promise.resolve(null),
      message: () => Promise.resolve('queued'),
    },
    {
      port: 0,
      host: '127.0.0.1',
      maxBytes: 1024 * 1024,
      maxClients: TOTAL,
      maxClientsPerAddress: PER_ADDRESS,
      proxyProtocol: true,
      name: 'mail.test',
      logger: createLogger('silent'),
    },
  );
}

beforeAll(async () => {
  listener = await listen();
});
afterAll(() => listener.close());

const open: RawSmtp[] = [];
afterEach(() => {
  for (const client of open.splice(0)) client.close();
});

/** Connects as `sender` (IPv4 or IPv6): the greeting, 220 or a refusal. */
async function connectAs(sender: string, to: MailListener = listener): Promise<SmtpAnswer> {
  const family = sender.includes(':') ? 'TCP6' : 'TCP4';
  const target = family === 'TCP6' ? '2001:db8::25' : '10.0.0.2';
  const { client, greeting } = await RawSmtp.open(
    to.port,
    `PROXY ${family} ${sender} ${target} 40000 25\r\n`,
  );
  open.push(client);
  return greeting;
}

async function connectEach(senders: readonly string[], to: MailListener = listener): Promise<number[]> {
  const codes: number[] = [];
  for (const sender of senders) codes.push((await connectAs(sender, to)).code);
  return codes;
}

test('one sender holds its share; the next is 421 saying why; another sender still connects', async () => {
  expect(await connectEach(Array<string>(PER_ADDRESS).fill('198.51.100.7'))).toEqual([220, 220, 220]);
  const refused = await connectAs('198.51.100.7');
  expect(refused.code).toBe(421);
  expect(refused.text).toMatch(/Too many connections from your address \(at most 3 at once\)/);
  expect((await connectAs('203.0.113.9')).code).toBe(220);
});

test('a closed connection gives its place back', async () => {
  expect(await connectEach(Array<string>(PER_ADDRESS).fill('198.51.100.8'))).toEqual([220, 220, 220]);
  const quitting = open[0]!;
  expect((await quitting.command('QUIT')).code).toBe(221);
  quitting.close();
  for (let attempt = 0; attempt < 50; attempt++) {
    const answer = await connectAs('198.51.100.8');
    if (answer.code === 220) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the closed connection did not give its place back');
});

test('an IPv6 sender is its /64: other hosts of the network share it, another network does not', async () => {
  const network = ['2001:db8:1:2::1', '2001:db8:1:2:ffff::9', '2001:db8:0001:0002:1:2:3:4'];
  expect(await connectEach(network)).toEqual([220, 220, 220]);
  expect((await connectAs('2001:db8:1:2:abcd::1')).code).toBe(421);
  expect((await connectAs('2001:db8:1:3::1')).code).toBe(220);
});

test("many senders together still stop at the listener's total", async () => {
  const own = await listen();
  try {
    const senders = Array.from({ length: TOTAL + 2 }, (_, index) => `192.0.2.${index + 1}`);
    const codes = await connectEach(senders, own);
    expect(codes.filter((code) => code === 220)).toHaveLength(TOTAL);
    expect(codes.slice(TOTAL)).toEqual([421, 421]);
  } finally {
    for (const client of open.splice(0)) client.close();
    await own.close();
  }
});

describe('addressShareOf', () => {
  it('an IPv4 address is its own share, written or IPv4-mapped', () => {
    fc.assert(
      fc.property(fc.ipV4(), (address) => {
        expect(addressShareOf(address)).toBe(address);
        expect(addressShareOf(`::ffff:${address}`)).toBe(address);
      }),
    );
  });

  it('any two IPv6 addresses share exactly when their first 64 bits are equal, however written', () => {
    // The oracle: the URL parser's own reading of the address, its groups written out.
    const firstHalf = (address: string) => {
      const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
      const [head = '', tail = ''] = canonical.split('::');
      const front = head === '' ? [] : head.split(':');
      const back = tail === '' ? [] : tail.split(':');
      const groups = [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
      return groups.slice(0, 4).join(':');
    };
    fc.assert(
      fc.property(fc.ipV6(), fc.ipV6(), (a, b) => {
        expect(addressShareOf(a) === addressShareOf(b)).toBe(firstHalf(a) === firstHalf(b));
        expect(addressShareOf(a)).toBe(`${firstHalf(a)}::/64`);
      }),
      { numRuns: 500 },
    );
  });
});
