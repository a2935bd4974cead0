import { HOOK_QUEUE_FULL, HOOK_REQUESTS_PER_SECOND } from '../../contracts/integrator';
import type { HookRequest } from '../../infra/http/hook-request';
import type { Logger } from '../../infra/logging';
import {
  SmtpReply,
  type MailAddress,
  type MailHandlers,
  type ReceivedMail,
} from '../../infra/smtp/mail-listener';
import { refusalAnswer, type HookIntake, type Incoming, type OpenHook } from './intake';

export interface MailReceiverDeps {
  readonly intake: HookIntake;
  /** The domain of mailhook addresses, lower case. */
  readonly mailDomain: string;
  readonly logger: Logger;
}

/** The field of a mail bundle that holds its attachments (`{name, mime, size, blobKey}` each). */
export const MAIL_ATTACHMENTS_FIELD = 'attachments';

/**
 * What a scenario receives of an email: sender, To, CC and BCC resolved (BCC: the envelope's recipients that no
 * header names, and a Bcc header if the sender kept one), subject, bodies, headers (Reply-To among them) and,
 * filled in by the intake, the attachments.
 */
export function mailBundle(mail: ReceivedMail): Record<string, unknown> {
  const named = new Set([...mail.to, ...mail.cc, ...mail.bcc].map((entry) => entry.address.toLowerCase()));
  const bcc: MailAddress[] = [
    ...mail.bcc,
    ...mail.envelope.rcptTo
      .filter((address) => !named.has(address.toLowerCase()))
      .map((address) => ({ name: '', address })),
  ];
  const envelopeSender = mail.envelope.mailFrom;
  return {
    sender: mail.from[0] ?? (envelopeSender === null ? null : { name: '', address: envelopeSender }),
    envelopeSender,
    to: mail.to,
    cc: mail.cc,
    bcc,
    replyTo: mail.replyTo,
    subject: mail.subject ?? '',
    date: mail.date,
    messageId: mail.messageId,
    text: mail.text ?? '',
    html: mail.html,
    headers: mail.headers,
    [MAIL_ATTACHMENTS_FIELD]: [],
  };
}

/** An email as the intake reads a request: the bundle as its body, the attachments as its files. */
function mailRequest(mail: ReceivedMail): HookRequest {
  return {
    method: 'SMTP',
    query: {},
    body: mailBundle(mail),
    files: mail.attachments.map((attachment) => ({ field: MAIL_ATTACHMENTS_FIELD, ...attachment })),
    // The log shows the text part as the body (the rest is in the bundle beside it).
    rawBody: mail.text ?? '',
    contentType: 'message/rfc822',
    bytes: mail.bytes,
    headers: Object.entries(mail.headers).flatMap(([name, value]) =>
      (Array.isArray(value) ? value : [value]).map((one) => ({ name, value: one })),
    ),
  };
}

/** The SMTP answer of a refusal: 4xx when trying later may work (rate, queue, a failure here), 5xx when not. */
function smtpReplyOf(error: unknown, logger: Logger): SmtpReply {
  if (error instanceof SmtpReply) return error;
  const refusal = refusalAnswer(error);
  if (refusal === null) {
    logger.error({ err: error }, 'receiving an email failed');
    return new SmtpReply(451, 'Local error in processing; try again later');
  }
  switch (refusal.status) {
    case 404:
      return new SmtpReply(550, 'No mailhook has this address');
    case 413:
      return new SmtpReply(552, refusal.body);
    case 429:
      return new SmtpReply(
        451,
        `Too many messages to this mailhook (it takes ${HOOK_REQUESTS_PER_SECOND} a second); try again later`,
      );
    // What this mailhook does not take (its state, the sender's address, its data structure): never.
    case 400:
      return refusal.body === HOOK_QUEUE_FULL
        ? new SmtpReply(452, 'The mailhook queue is full; try again later')
        : new SmtpReply(550, refusal.body);
    case 403:
    case 410:
      return new SmtpReply(550, refusal.body);
    // Anything else (concurrent changes, a store that is away) may pass: try again.
    default:
      return new SmtpReply(451, `${refusal.body}; try again later`);
  }
}

function incomingOf(address: string, ip: string, bytes: number): Incoming {
  return { method: 'SMTP', url: `mailto:${address}`, headers: [], ip, declaredBytes: bytes };
}

/**
 * The mailhooks' side of the SMTP listener. A recipient is checked as a request to its hook would be (address,
 * state, IP restrictions, rate): an unknown one is refused with 550, one over its rate with 451. A message is
 * accepted for each of its recipients as an event before the 250; when every recipient refused it, the most
 * hopeful refusal is the answer (a temporary one, so the sender tries again), and when some took it, the
 * others' refusals are in their hooks' logs.
 */
export function createMailReceiver(deps: MailReceiverDeps): MailHandlers<OpenHook> {
  return {
    async recipient(address, client) {
      const at = address.lastIndexOf('@');
      if (at <= 0 || address.slice(at + 1).toLowerCase() !== deps.mailDomain)
        throw new SmtpReply(550, `This server takes mail only for mailhooks at ${deps.mailDomain}`);
      try {
        return await deps.intake.open(address.slice(0, at), 'mail', incomingOf(address, client.ip, 0));
      } catch (error) {
        throw smtpReplyOf(error, deps.logger);
      }
    },

    async message(mail, recipients, client) {
      const byHook = new Map(
        recipients.map((recipient) => [
          `${recipient.accepted.tenant}.${recipient.accepted.state.webhookId}`,
          recipient,
        ]),
      );
      const refusals: SmtpReply[] = [];
      for (const recipient of byHook.values()) {
        try {
          await deps.intake.receive(
            recipient.accepted,
            incomingOf(recipient.address, client.ip, mail.bytes),
            async () => mailRequest(mail),
          );
        } catch (error) {
          refusals.push(smtpReplyOf(error, deps.logger));
        }
      }
      if (refusals.length < byHook.size) return 'Accepted';
      throw (
        refusals.find((reply) => reply.code < 500) ?? refusals[0] ?? new SmtpReply(554, 'No valid recipients')
      );
    },
  };
}
