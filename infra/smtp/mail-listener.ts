import { simpleParser, type AddressObject, type EmailAddress, type HeaderValue } from 'mailparser';
import type { AddressInfo } from 'node:net';
import {
  SMTPServer,
  type SMTPServerDataStream,
  type SMTPServerEnvelope,
  type SMTPServerSession,
} from 'smtp-server';
import type { Logger } from '../logging';
import { addressShareOf } from './address-share';

/** A name and an address, as a header or the envelope gives them. */
export interface MailAddress {
  readonly name: string;
  readonly address: string;
}

/** A message as the listener read it: its envelope, its headers resolved, its bodies and attachments. */
export interface ReceivedMail {
  readonly envelope: {
    /** MAIL FROM; null for the null sender (bounces). */
    readonly mailFrom: string | null;
    /** The recipients this server accepted (RCPT TO). */
    readonly rcptTo: readonly string[];
  };
  readonly from: readonly MailAddress[];
  readonly to: readonly MailAddress[];
  readonly cc: readonly MailAddress[];
  /** A Bcc header, which senders normally leave out: the envelope tells the rest. */
  readonly bcc: readonly MailAddress[];
  readonly replyTo: readonly MailAddress[];
  readonly subject: string | null;
  readonly date: string | null;
  readonly messageId: string | null;
  readonly text: string | null;
  readonly html: string | null;
  /** Every header by its lower-case name, decoded; a repeated one gives an array. */
  readonly headers: Readonly<Record<string, string | string[]>>;
  readonly attachments: ReadonlyArray<{
    readonly name: string;
    readonly mime: string;
    readonly data: Buffer;
  }>;
  /** The size of the message as sent (headers and body). */
  readonly bytes: number;
}

/** An SMTP answer that is not 250: a code (4xx: try again later, 5xx: never) and its text. */
export class SmtpReply extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The application side of the listener. `Accepted` is whatever a recipient's check gives back. */
export interface MailHandlers<Accepted> {
  /** RCPT TO: resolves what the recipient is, or throws an SmtpReply that refuses it. */
  recipient(address: string, client: { readonly ip: string }): Promise<Accepted>;
  /** DATA: the message for its accepted recipients; resolves with the text of 250, or throws an SmtpReply. */
  message(
    mail: ReceivedMail,
    recipients: ReadonlyArray<{ readonly address: string; readonly accepted: Accepted }>,
    client: { readonly ip: string },
  ): Promise<string>;
}

export interface MailListenerOptions {
  readonly port: number;
  readonly host: string;
  /** The largest message, headers and attachments included; advertised as SIZE. */
  readonly maxBytes: number;
  readonly maxClients: number;
  /**
   * Connections one sender holds at once (an IPv4 address, an IPv6 /64: see address-share.ts), so that one
   * sender cannot hold all `maxClients`; more are turned away with 421 until some close.
   */
  readonly maxClientsPerAddress: number;
  /** Each connection opens with a PROXY protocol (v1) header that names the real client (behind a TCP proxy). */
  readonly proxyProtocol?: boolean;
  /** Recipients one message may have (RFC 5321 asks servers to take at least 100). */
  readonly maxRecipients?: number;
  /** The server's name in its greeting. */
  readonly name: string;
  readonly logger: Logger;
  /** A client that sends nothing for this long is disconnected. */
  readonly socketTimeoutMs?: number;
}

export interface MailListener {
  readonly port: number;
  /** Stops taking connections; those open get `closeTimeoutMs` to finish, then are cut. */
  close(): Promise<void>;
}

/** HTML longer than this is not turned into text for a message without a text part (the conversion is slow). */
const MAX_HTML_TO_TEXT = 1_000_000;

function addressesOf(value: AddressObject | AddressObject[] | undefined): MailAddress[] {
  const flatten = (entries: readonly EmailAddress[]): MailAddress[] =>
    entries.flatMap((entry) =>
      entry.group
        ? flatten(entry.group)
        : entry.address
          ? [{ name: entry.name, address: entry.address }]
          : [],
    );
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).flatMap((object) => flatten(object.value));
}

function headerText(value: HeaderValue): string | string[] {
  if (typeof value === 'string') return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : value.toISOString();
  if (Array.isArray(value)) return value.map((item) => String(headerText(item as HeaderValue)));
  if ('text' in value && typeof value.text === 'string') return value.text;
  if ('value' in value && typeof value.value === 'string') {
    const params = Object.entries((value as { params?: Record<string, string> }).params ?? {});
    return [value.value, ...params.map(([name, param]) => `${name}=${param}`)].join('; ');
  }
  return JSON.stringify(value);
}

/** Parses a whole message (at most the listener's limit, already in memory). */
export async function parseMail(source: Buffer, envelope: ReceivedMail['envelope']): Promise<ReceivedMail> {
  const parsed = await simpleParser(source, {
    skipImageLinks: true,
    keepCidLinks: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    maxHtmlLengthToParse: MAX_HTML_TO_TEXT,
    checksumAlgo: false,
  });
  const headers: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of parsed.headers) headers[name] = headerText(value);
  return {
    envelope,
    from: addressesOf(parsed.from),
    to: addressesOf(parsed.to),
    cc: addressesOf(parsed.cc),
    bcc: addressesOf(parsed.bcc),
    replyTo: addressesOf(parsed.replyTo),
    subject: parsed.subject ?? null,
    date: parsed.date && !Number.isNaN(parsed.date.getTime()) ? parsed.date.toISOString() : null,
    messageId: parsed.messageId ?? null,
    text: parsed.text ?? null,
    html: typeof parsed.html === 'string' ? parsed.html : null,
    headers: { ...headers },
    attachments: parsed.attachments.map((attachment, index) => ({
      name: attachment.filename ?? `attachment-${index + 1}`,
      mime: attachment.contentType,
      data: attachment.content,
    })),
    bytes: source.length,
  };
}

/**
 * Reads the DATA stream into memory up to `maxBytes`; past it the rest is read and dropped (SMTP answers
 * only after the final dot), so an oversized message never holds more than the limit.
 */
function readLimited(stream: SMTPServerDataStream, maxBytes: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= maxBytes) chunks.push(chunk);
      else chunks.length = 0;
    });
    stream.once('error', reject);
    stream.once('end', () => resolve(bytes > maxBytes || stream.sizeExceeded ? null : Buffer.concat(chunks)));
  });
}

function replyError(reply: SmtpReply): Error & { responseCode: number } {
  return Object.assign(new Error(reply.message), { responseCode: reply.code });
}

/**
 * The SMTP listener of mailhooks: no authentication and no TLS (it only receives mail for its own
 * addresses), SIZE advertised, recipients checked one by one, each message handed on whole.
 */
export async function startMailListener<Accepted>(
  handlers: MailHandlers<Accepted>,
  options: MailListenerOptions,
): Promise<MailListener> {
  const { logger, maxBytes } = options;
  // Per mail transaction (smtp-server makes a new envelope for each): what each accepted recipient is.
  const accepted = new WeakMap<SMTPServerEnvelope, Array<{ address: string; accepted: Accepted }>>();
  // The connections each sender holds, and the share each open connection counts in.
  const heldBy = new Map<string, number>();
  const shareOf = new WeakMap<SMTPServerSession, string>();
  const failed = (error: unknown, what: string): Error & { responseCode: number } => {
    if (error instanceof SmtpReply) return replyError(error);
    logger.error({ err: error }, `mailhook listener: ${what} failed`);
    return replyError(new SmtpReply(451, 'Local error in processing; try again later'));
  };
  const server = new SMTPServer({
    name: options.name,
    banner: 'Records Platform mailhooks',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    disableReverseLookup: true,
    hideENHANCEDSTATUSCODES: false,
    size: maxBytes,
    maxClients: options.maxClients,
    useProxy: options.proxyProtocol ?? false,
    maxRecipients: options.maxRecipients ?? 100,
    socketTimeout: options.socketTimeoutMs ?? 60_000,
    closeTimeout: 5_000,
    logger: false,
    onConnect(session, callback) {
      const share = addressShareOf(session.remoteAddress);
      const held = heldBy.get(share) ?? 0;
      if (held >= options.maxClientsPerAddress)
        return callback(
          replyError(
            new SmtpReply(
              421,
              `Too many connections from your address (at most ${options.maxClientsPerAddress} at once); try again later`,
            ),
          ),
        );
      heldBy.set(share, held + 1);
      shareOf.set(session, share);
      callback();
    },
    onClose(session) {
      const share = shareOf.get(session);
      if (share === undefined) return;
      shareOf.delete(session);
      const held = (heldBy.get(share) ?? 1) - 1;
      if (held <= 0) heldBy.delete(share);
      else heldBy.set(share, held);
    },
    onRcptTo(address, session, callback) {
      handlers.recipient(address.address, { ip: session.remoteAddress }).then(
        (result) => {
          const list = accepted.get(session.envelope) ?? [];
          list.push({ address: address.address, accepted: result });
          accepted.set(session.envelope, list);
          callback();
        },
        (error: unknown) => callback(failed(error, 'a recipient check')),
      );
    },
    onData(stream, session: SMTPServerSession, callback) {
      const envelope = session.envelope;
      const recipients = accepted.get(envelope) ?? [];
      readLimited(stream, maxBytes)
        .then(async (source) => {
          if (source === null)
            throw new SmtpReply(552, `Message exceeds the fixed maximum message size of ${maxBytes} bytes`);
          const mail = await parseMail(source, {
            mailFrom: envelope.mailFrom === false ? null : envelope.mailFrom.address || null,
            rcptTo: recipients.map((recipient) => recipient.address),
          }).catch((error: unknown) => {
            throw new SmtpReply(
              554,
              `The message could not be read: ${error instanceof Error ? error.message : String(error)}`,
            );
          });
          return handlers.message(mail, recipients, { ip: session.remoteAddress });
        })
        .then(
          (text) => callback(null, text),
          (error: unknown) => callback(failed(error, 'receiving a message')),
        );
    },
  });
  server.on('error', (error) => logger.warn({ err: error }, 'mailhook listener: a connection failed'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
