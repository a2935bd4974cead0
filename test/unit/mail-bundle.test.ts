import { mailBundle } from '../../command-api/hooks/mail-receiver';
import { parseMail } from '../../infra/smtp/mail-listener';

const HOOK = 'Ab3dEfGh1jKlMnOpQrStUvWxYz012345@hooks.example';

/** A message as a mail server would send it (CRLF line ends). */
function message(lines: readonly string[]): Buffer {
  return Buffer.from(lines.join('\r\n'), 'utf8');
}

describe('the bundle of an email', () => {
  test('resolves sender, To, CC and BCC (envelope recipients no header names), Reply-To in the headers', async () => {
    const mail = await parseMail(
      message([
        'From: "Ada Lovelace" <ada@example.org>',
        'To: Team <team@example.org>, other@example.org',
        'Cc: Bob <bob@example.org>',
        'Reply-To: Replies <replies@example.org>',
        'Subject: =?UTF-8?B?UmVjaG51bmcg4oKsNDI=?=',
        'Date: Thu, 26 Nov 2026 10:00:00 +0000',
        'Message-ID: <m1@example.org>',
        'X-Trace: one',
        'X-Trace: two',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'Hello',
        '',
      ]),
      { mailFrom: 'bounces@example.org', rcptTo: [HOOK] },
    );
    const bundle = mailBundle(mail);
    expect(bundle).toEqual({
      sender: { name: 'Ada Lovelace', address: 'ada@example.org' },
      envelopeSender: 'bounces@example.org',
      to: [
        { name: 'Team', address: 'team@example.org' },
        { name: '', address: 'other@example.org' },
      ],
      cc: [{ name: 'Bob', address: 'bob@example.org' }],
      bcc: [{ name: '', address: HOOK }],
      replyTo: [{ name: 'Replies', address: 'replies@example.org' }],
      subject: 'Rechnung €42',
      date: '2026-11-26T10:00:00.000Z',
      messageId: '<m1@example.org>',
      text: 'Hello\n',
      html: null,
      headers: expect.objectContaining({
        'reply-to': '"Replies" <replies@example.org>',
        subject: 'Rechnung €42',
        'x-trace': ['one', 'two'],
      }),
      attachments: [],
    });
  });

  test('a recipient named in To is not a BCC; a kept Bcc header is; no From falls back to the envelope', async () => {
    const mail = await parseMail(
      message(['To: <' + HOOK + '>', 'Bcc: hidden@example.org', 'Subject: x', '', 'body', '']),
      { mailFrom: 'sender@example.org', rcptTo: [HOOK.toUpperCase()] },
    );
    const bundle = mailBundle(mail);
    expect(bundle.bcc).toEqual([{ name: '', address: 'hidden@example.org' }]);
    expect(bundle.sender).toEqual({ name: '', address: 'sender@example.org' });
  });

  test('the null sender and a message without a subject or text give empty values, never undefined', async () => {
    const mail = await parseMail(message(['', '']), { mailFrom: null, rcptTo: [HOOK] });
    expect(mailBundle(mail)).toMatchObject({
      sender: null,
      envelopeSender: null,
      subject: '',
      text: '',
      html: null,
      to: [],
      cc: [],
    });
  });

  test('attachments are read with their names and types; one without a name gets one', async () => {
    const mail = await parseMail(
      message([
        'Subject: files',
        'Content-Type: multipart/mixed; boundary="b"',
        '',
        '--b',
        'Content-Type: text/plain',
        '',
        'see files',
        '--b',
        'Content-Type: application/pdf; name="a.pdf"',
        'Content-Disposition: attachment; filename="a.pdf"',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from('%PDF-1.7').toString('base64'),
        '--b',
        'Content-Type: application/octet-stream',
        'Content-Disposition: attachment',
        '',
        'raw',
        '--b--',
        '',
      ]),
      { mailFrom: 'a@example.org', rcptTo: [HOOK] },
    );
    expect(mail.attachments.map(({ name, mime, data }) => ({ name, mime, data: data.toString() }))).toEqual([
      { name: 'a.pdf', mime: 'application/pdf', data: '%PDF-1.7' },
      { name: 'attachment-2', mime: 'application/octet-stream', data: 'raw' },
    ]);
    expect(mail.text).toBe('see files');
  });
});
