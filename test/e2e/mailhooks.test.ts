import { createTransport, type Transporter } from 'nodemailer';
import { FILE_FIELDS } from '../support/hook-requests';
import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';
import { RawSmtp, type SmtpAnswer } from '../support/smtp-client';
import { polling } from '../support/eventually';

const MAIL_DOMAIN = 'hooks.example.test';
const MAX_BYTES = 26_214_400;

interface Mailhook extends Entity {
  key: string;
  address: string;
  url: string;
}

/** Mailhooks end to end: a real SMTP client talks to the platform's listener. */
describe('mailhooks', () => {
  let platform: TestPlatform;
  let smtpPort: number;
  let mailer: Transporter;
  let moduleId: number;

  beforeAll(async () => {
    // Every test mail comes from 127.0.0.1: the per-sender connection share (test/e2e/smtp-caps.test.ts) is
    // raised so that these tests see the hooks' own limits.
    platform = await startPlatform({ MAIL_DOMAIN, SMTP_MAX_CLIENTS_PER_ADDRESS: '200' });
    smtpPort = platform.running.smtpPort!;
    mailer = createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
    const space = await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Inbox' } }));
    const module = await json<Entity>(
      await platform.call('POST', '/module', { body: { spaceId: space.id, name: 'Messages' } }),
    );
    moduleId = module.id;
  });
  afterAll(async () => {
    mailer.close();
    await platform.stop();
  });

  async function createMailhook(body: Record<string, unknown> = {}): Promise<Mailhook> {
    const response = await platform.call('POST', '/webhook', {
      body: { name: 'Mail in', kind: 'mail', ...body },
    });
    expect(response.status).toBe(201);
    return json(response);
  }

  const eventually = polling(10_000);

  const logsOf = async (hookId: number) =>
    json<Page<Record<string, unknown>>>(await platform.call('GET', `/webhook/${hookId}/log`));
  const logDetail = async (hookId: number, logId: unknown) =>
    json<Record<string, unknown>>(await platform.call('GET', `/webhook/${hookId}/log/${String(logId)}`));
  const queueOf = async (hookId: number) =>
    json<Page<Record<string, unknown>>>(await platform.call('GET', `/webhook/${hookId}/queue`));

  /** What a send was answered: the accepted and refused recipients, or the refusal of the whole message. */
  async function sendMail(
    message: Parameters<Transporter['sendMail']>[0],
  ): Promise<{ accepted: string[]; rejected: string[] } | { code: number; response: string }> {
    try {
      const info = (await mailer.sendMail(message)) as { accepted: string[]; rejected: string[] };
      return { accepted: info.accepted, rejected: info.rejected };
    } catch (error) {
      const failure = error as { responseCode?: number; response?: string };
      return { code: failure.responseCode ?? 0, response: failure.response ?? String(error) };
    }
  }

  test('a mailhook has a generated address at the mail domain; its hook id is no web address', async () => {
    const hook = await createMailhook();
    expect(hook).toMatchObject({ kind: 'mail', status: 'enabled' });
    expect(hook.key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(hook.address).toBe(`${hook.key}@${MAIL_DOMAIN}`);
    expect(hook.url).toBe(`mailto:${hook.address}`);
    const read = await json<Mailhook>(await platform.call('GET', `/webhook/${hook.id}`));
    expect(read).toMatchObject({ kind: 'mail', address: hook.address });
    expect((await fetch(`${platform.url}/hook/${hook.key}`)).status).toBe(404);
    const web = await json<Mailhook>(await platform.call('POST', '/webhook', { body: { name: 'Web' } }));
    expect(web).toMatchObject({ kind: 'web', address: null });
    const list = await json<Page<Mailhook>>(
      await platform.call('GET', `/webhook?filter=${encodeURIComponent(`id=${hook.id}`)}`),
    );
    expect(list.items[0]).toMatchObject({ kind: 'mail', address: hook.address });
  });

  test('an email runs the scenario with sender, To, CC, BCC, Reply-To, bodies and attachments', async () => {
    const hook = await createMailhook();
    const record = await json<Entity>(
      await platform.call('POST', '/record', { body: { moduleId, name: 'Invoices' } }),
    );
    const scenario = await platform.call('POST', '/scenario', {
      body: {
        name: 'Mail to record',
        webhookId: hook.id,
        steps: [
          { kind: 'createRecord', moduleId, name: { expr: 'subject & " from " & sender.address' } },
          { kind: 'attachRecordFile', recordId: record.id, file: { expr: 'attachments[0]' } },
        ],
      },
    });
    expect(scenario.status).toBe(201);
    const { id: scenarioId } = await json<Entity>(scenario);

    const sent = await sendMail({
      from: 'Ada Lovelace <ada@example.org>',
      to: 'Team <team@example.org>',
      cc: ['Bob <bob@example.org>'],
      bcc: hook.address,
      replyTo: 'Replies <replies@example.org>',
      subject: 'Invoice 42',
      text: 'Please find the invoice attached.',
      html: '<p>Please find the <b>invoice</b> attached.</p>',
      attachments: [
        { filename: 'invoice.pdf', content: Buffer.from('%PDF-1.7 invoice'), contentType: 'application/pdf' },
        { filename: 'notes.txt', content: 'two lines\nof notes', contentType: 'text/plain' },
      ],
      // Only the mailhook is delivered here (the others are someone else's servers).
      envelope: { from: 'bounces@example.org', to: [hook.address] },
    });
    expect(sent).toEqual({ accepted: [hook.address], rejected: [] });

    const runs = await eventually(
      async () =>
        json<Page<Record<string, unknown>>>(await platform.call('GET', `/scenario/${scenarioId}/run`)),
      (page) => page.items[0]?.status === 'succeeded' || page.items[0]?.status === 'failed',
    );
    expect(runs.items[0]).toMatchObject({ status: 'succeeded' });
    const made = await json<Page>(
      await platform.call(
        'GET',
        `/record?filter=${encodeURIComponent('name="Invoice 42 from ada@example.org"')}`,
      ),
    );
    expect(made.items).toHaveLength(1);
    const files = await json<Page<Record<string, unknown>>>(
      await platform.call('GET', `/record/${record.id}/file`),
    );
    expect(files.items.map((file) => file.name)).toEqual(['invoice.pdf']);
    const content = await platform.call(
      'GET',
      `/record/${record.id}/file/${String(files.items[0]!.id)}/content`,
    );
    expect(await content.text()).toBe('%PDF-1.7 invoice');

    const logs = await logsOf(hook.id);
    expect(logs.items[0]).toMatchObject({ status: 'success', method: 'SMTP' });
    const detail = await logDetail(hook.id, logs.items[0]!.id);
    const bundle = detail.bundle as Record<string, unknown>;
    expect(bundle).toMatchObject({
      sender: { name: 'Ada Lovelace', address: 'ada@example.org' },
      envelopeSender: 'bounces@example.org',
      to: [{ name: 'Team', address: 'team@example.org' }],
      cc: [{ name: 'Bob', address: 'bob@example.org' }],
      bcc: [{ name: '', address: hook.address }],
      replyTo: [{ name: 'Replies', address: 'replies@example.org' }],
      subject: 'Invoice 42',
      text: 'Please find the invoice attached.',
      html: '<p>Please find the <b>invoice</b> attached.</p>',
    });
    expect((bundle.headers as Record<string, unknown>)['reply-to']).toBe('"Replies" <replies@example.org>');
    expect(bundle.attachments).toEqual([
      { name: 'invoice.pdf', mime: 'application/pdf', size: 16, blobKey: expect.any(String) },
      { name: 'notes.txt', mime: 'text/plain', size: 18, blobKey: expect.any(String) },
    ]);
    expect(detail.request).toMatchObject({
      method: 'SMTP',
      url: `mailto:${hook.address}`,
      contentType: 'message/rfc822',
      body: 'Please find the invoice attached.',
    });
  });

  test('mail is an event before the 250: a mailhook without a scenario has it queued at once', async () => {
    const hook = await createMailhook();
    const sent = await sendMail({
      from: 'a@example.org',
      to: hook.address,
      subject: 'Queued',
      text: 'x',
    });
    expect(sent).toEqual({ accepted: [hook.address], rejected: [] });
    const queue = await queueOf(hook.id);
    expect(queue.meta.total).toBe(1);
  });

  test('unknown, foreign, web and disabled addresses are refused with 550 at RCPT; the others still get it', async () => {
    const hook = await createMailhook();
    const web = await json<Mailhook>(await platform.call('POST', '/webhook', { body: { name: 'Web' } }));
    const disabled = await createMailhook();
    expect((await platform.call('POST', `/webhook/${disabled.id}/disable`)).status).toBe(200);
    const { client } = await RawSmtp.open(smtpPort);
    try {
      expect((await client.command('EHLO tester.example')).code).toBe(250);
      expect((await client.command('MAIL FROM:<a@example.org>')).code).toBe(250);
      const unknown = await client.command(`RCPT TO:<${'x'.repeat(32)}@${MAIL_DOMAIN}>`);
      expect(unknown).toEqual({ code: 550, text: '5.1.1 No mailhook has this address' });
      expect((await client.command(`RCPT TO:<${hook.key}@elsewhere.example>`)).code).toBe(550);
      expect((await client.command(`RCPT TO:<${web.key}@${MAIL_DOMAIN}>`)).code).toBe(550);
      expect((await client.command(`RCPT TO:<short@${MAIL_DOMAIN}>`)).code).toBe(550);
      const off = await client.command(`RCPT TO:<${disabled.address}>`);
      expect(off.code).toBe(550);
      expect(off.text).toContain('disabled');
      expect((await client.command(`RCPT TO:<${hook.address}>`)).code).toBe(250);
      expect((await client.command('DATA')).code).toBe(354);
      await client.write('Subject: partly\r\n\r\nhello\r\n.\r\n');
      expect((await client.next()).code).toBe(250);
    } finally {
      client.close();
    }
    expect((await queueOf(hook.id)).meta.total).toBe(1);
  });

  test('SIZE is advertised; a declared or streamed message over 25 MB is refused with 552 and leaves nothing', async () => {
    const hook = await createMailhook();
    const { client } = await RawSmtp.open(smtpPort);
    try {
      const ehlo = await client.command('EHLO tester.example');
      expect(ehlo.text.split('\n')).toContain(`SIZE ${MAX_BYTES}`);
      expect((await client.command(`MAIL FROM:<a@example.org> SIZE=${MAX_BYTES + 1}`)).code).toBe(552);
      expect((await client.command('MAIL FROM:<a@example.org>')).code).toBe(250);
      expect((await client.command(`RCPT TO:<${hook.address}>`)).code).toBe(250);
      expect((await client.command('DATA')).code).toBe(354);
      await client.write('Subject: huge\r\nContent-Type: text/plain\r\n\r\n');
      const line = `${'y'.repeat(998)}\r\n`;
      const chunk = line.repeat(1024);
      for (let sent = 0; sent <= MAX_BYTES; sent += chunk.length) await client.write(chunk);
      await client.write('.\r\n');
      const answer = await client.next();
      expect(answer.code).toBe(552);
      // The connection goes on serving: a small message after the refused one is taken.
      expect((await client.command('MAIL FROM:<a@example.org>')).code).toBe(250);
      expect((await client.command(`RCPT TO:<${hook.address}>`)).code).toBe(250);
      expect((await client.command('DATA')).code).toBe(354);
      await client.write('Subject: small\r\n\r\nok\r\n.\r\n');
      expect((await client.next()).code).toBe(250);
    } finally {
      client.close();
    }
    const queue = await queueOf(hook.id);
    expect(queue.meta.total).toBe(1);
  });

  test('a 25 MB email (attachments included) is taken whole', async () => {
    const hook = await createMailhook();
    // Base64 grows content by a third: 18 MB of attachment make about 24.3 MB of message.
    const big = Buffer.alloc(18 * 1024 * 1024, 7);
    const sent = await sendMail({
      from: 'a@example.org',
      to: hook.address,
      subject: 'Big',
      text: 'see attached',
      attachments: [{ filename: 'big.bin', content: big, contentType: 'application/octet-stream' }],
    });
    expect(sent).toEqual({ accepted: [hook.address], rejected: [] });
    const logs = await logsOf(hook.id);
    const detail = await logDetail(hook.id, logs.items[0]!.id);
    expect((detail.bundle as { attachments: unknown[] }).attachments).toEqual([
      { name: 'big.bin', mime: 'application/octet-stream', size: big.length, blobKey: expect.any(String) },
    ]);
  });

  test('damaged MIME is read as far as it goes; MIME past the parser limits is refused with 554; the listener keeps serving', async () => {
    const hook = await createMailhook();
    const deliver = async (message: string): Promise<SmtpAnswer> => {
      const { client } = await RawSmtp.open(smtpPort);
      try {
        await client.command('EHLO tester.example');
        await client.command('MAIL FROM:<a@example.org>');
        expect((await client.command(`RCPT TO:<${hook.address}>`)).code).toBe(250);
        expect((await client.command('DATA')).code).toBe(354);
        await client.write(Buffer.from(`${message}.\r\n`, 'latin1'));
        return await client.next();
      } finally {
        client.close();
      }
    };
    const damaged = [
      // A multipart message whose closing boundary never comes.
      'Subject: broken\r\nContent-Type: multipart/mixed; boundary="zzz"\r\n\r\n--zzz\r\nContent-Type: text/plain\r\n\r\npart\r\n',
      // Header bytes that are not UTF-8, a header without a colon, a bad encoded word.
      'Subject: =?utf-8?B?////?=\r\nX-Bytes: \xff\xfe\r\nNoColonHere\r\n\r\nbody\r\n',
      // Base64 that is not base64.
      'Subject: b64\r\nContent-Type: application/pdf; name=x.pdf\r\nContent-Transfer-Encoding: base64\r\nContent-Disposition: attachment\r\n\r\n!!!not base64!!!\r\n',
      // Nothing at all.
      '',
    ];
    for (const message of damaged) expect((await deliver(message)).code).toBe(250);
    const logs = await logsOf(hook.id);
    expect(logs.items.map((entry) => entry.status)).toEqual(['success', 'success', 'success', 'success']);
    const first = await logDetail(hook.id, logs.items[3]!.id);
    expect(first.bundle).toMatchObject({ subject: 'broken', text: 'part\n' });

    // Beyond what the parser takes: a header block over 1 MB, more than 1,000 MIME parts.
    const hugeHeader = `Subject: big header\r\n${'X-Filler: '.concat('h'.repeat(900), '\r\n').repeat(1200)}\r\nbody\r\n`;
    const parts = Array.from(
      { length: 1100 },
      (_, n) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${n}\r\n`,
    );
    const manyParts = `Subject: many parts\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${parts.join('')}--b--\r\n`;
    for (const message of [hugeHeader, manyParts]) {
      const answer = await deliver(message);
      expect(answer.code).toBe(554);
      expect(answer.text).toContain('The message could not be read');
    }
    expect((await logsOf(hook.id)).meta.total).toBe(4);
    const sent = await sendMail({ from: 'a@example.org', to: hook.address, subject: 'after', text: 'ok' });
    expect(sent).toEqual({ accepted: [hook.address], rejected: [] });
  });

  test('a mail bomb to one address is answered 451 past 30 a second (try later); the address takes mail again', async () => {
    const hook = await createMailhook();
    const results = await Promise.all(
      Array.from({ length: 45 }, (_, n) =>
        sendMail({ from: 'bomb@example.org', to: hook.address, subject: `n${n}`, text: 'x' }),
      ),
    );
    const accepted = results.filter((result) => 'accepted' in result && result.accepted.length === 1).length;
    const deferred = results.filter((result) => 'code' in result && result.code === 451).length;
    expect(accepted).toBeGreaterThanOrEqual(1);
    expect(accepted).toBeLessThanOrEqual(30);
    expect(results.filter((result) => !('accepted' in result) && result.code !== 451)).toEqual([]);
    expect(accepted + deferred).toBe(45);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await sendMail({ from: 'a@example.org', to: hook.address, subject: 'later', text: 'x' })).toEqual({
      accepted: [hook.address],
      rejected: [],
    });
  });

  test('mail that does not match the data structure is refused with 550 and the reasons, and logged', async () => {
    const hook = await createMailhook({
      dataStructure: {
        fields: [
          { name: 'subject', type: 'text', required: true },
          {
            name: 'attachments',
            type: 'array',
            required: true,
            items: {
              type: 'collection',
              fields: FILE_FIELDS,
            },
          },
          { name: 'orderId', type: 'number', required: true },
        ],
      },
    });
    const sent = await sendMail({ from: 'a@example.org', to: hook.address, subject: 'no order', text: 'x' });
    expect(sent).toMatchObject({ code: 550 });
    expect((sent as { response: string }).response).toContain('orderId');
    const logs = await eventually(
      () => logsOf(hook.id),
      (page) => page.items.length > 0,
    );
    expect(logs.items[0]).toMatchObject({ status: 'warning', method: 'SMTP' });
    expect((await queueOf(hook.id)).meta.total).toBe(0);
  });

  test('a full queue defers mail with 452', async () => {
    const hook = await createMailhook({ queueCapacity: 1 });
    expect(
      await sendMail({ from: 'a@example.org', to: hook.address, subject: '1', text: 'x' }),
    ).toMatchObject({
      accepted: [hook.address],
    });
    expect(
      await sendMail({ from: 'a@example.org', to: hook.address, subject: '2', text: 'x' }),
    ).toMatchObject({
      code: 452,
    });
  });

  test('an exported mailhook scenario imports as a mailhook with a new address', async () => {
    const hook = await createMailhook();
    const { id: scenarioId } = await json<Entity>(
      await platform.call('POST', '/scenario', {
        body: { name: 'Mail', webhookId: hook.id, steps: [{ kind: 'setVariable', name: 'a', value: 1 }] },
      }),
    );
    const document = await json<Record<string, unknown>>(
      await platform.call('GET', `/scenario/${scenarioId}/export`),
    );
    expect(document.webhook).toMatchObject({ kind: 'mail' });
    const imported = await platform.call('POST', '/scenario/import', { body: { document } });
    expect(imported.status).toBe(201);
    const { webhook } = await json<{ webhook: Mailhook }>(imported);
    expect(webhook).toMatchObject({ kind: 'mail' });
    expect(webhook.address).not.toBe(hook.address);
    expect(webhook.address.endsWith(`@${MAIL_DOMAIN}`)).toBe(true);
  });

  test('behind a TCP proxy the PROXY header names the sender whose address the IP restrictions check', async () => {
    const proxied = await startPlatform({ MAIL_DOMAIN, SMTP_PROXY_PROTOCOL: 'true' });
    try {
      const port = proxied.running.smtpPort!;
      const hook = await json<Mailhook>(
        await proxied.call('POST', '/webhook', {
          body: { name: 'Partners only', kind: 'mail', ipRestrictions: '203.0.113.0/24' },
        }),
      );
      const recipientAnswer = async (sender: string) => {
        const { client, greeting } = await RawSmtp.open(port, `PROXY TCP4 ${sender} 10.0.0.2 40000 25\r\n`);
        try {
          expect(greeting.code).toBe(220);
          await client.command('EHLO partner.example');
          await client.command('MAIL FROM:<a@partner.example>');
          const answer = await client.command(`RCPT TO:<${hook.address}>`);
          if (answer.code === 250) {
            await client.command('DATA');
            await client.write('Subject: via proxy\r\n\r\nhi\r\n.\r\n');
            expect((await client.next()).code).toBe(250);
          }
          return answer.code;
        } finally {
          client.close();
        }
      };
      expect(await recipientAnswer('198.51.100.7')).toBe(550);
      expect(await recipientAnswer('203.0.113.9')).toBe(250);
      const logs = await json<Page<Record<string, unknown>>>(
        await proxied.call('GET', `/webhook/${hook.id}/log`),
      );
      const detail = await json<Record<string, unknown>>(
        await proxied.call('GET', `/webhook/${hook.id}/log/${String(logs.items[0]!.id)}`),
      );
      expect(detail.request).toMatchObject({ ip: '203.0.113.9' });
    } finally {
      await proxied.stop();
    }
  });
});
