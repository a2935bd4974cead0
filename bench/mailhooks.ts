import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTransport } from 'nodemailer';
import { freePort } from '../test/support/child-platform';
import { machineConditions, percentile, printFigure } from './report';
import { apiOf, startServer } from './server';

/**
 * Mailhooks on the one-process platform (embedded stores), the figures of issue 19:
 * - small emails accepted durably per second (each appended as an event before its 250) across many
 *   mailhooks, each bound to a one-step instant scenario that runs meanwhile;
 * - the time from the first byte to the 250 of an email of about 25 MB (one attachment).
 */
const HOOKS = Number(process.env.BENCH_HOOKS ?? 100);
const SMALL_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 16;
const BIG_ROUNDS = 3;
const MAIL_DOMAIN = 'bench.example';

interface Hook {
  id: number;
  address: string;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-mailhooks-'));
  const smtpPort = await freePort();
  const server = await startServer(dataDir, { SMTP_PORT: String(smtpPort), MAIL_DOMAIN });
  const transport = createTransport({
    host: '127.0.0.1',
    port: smtpPort,
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: CONNECTIONS,
    maxMessages: Infinity,
  });
  try {
    const call = apiOf(server.url);
    const hooks: Hook[] = [];
    for (let index = 0; index < HOOKS; index++) {
      const hook = await call<Hook>('POST', '/webhook', { name: 'Bench mail', kind: 'mail' });
      await call('POST', '/scenario', {
        name: 'Bench mail',
        webhookId: hook.id,
        steps: [{ kind: 'setVariable', name: 'subject', value: { expr: 'subject' } }],
      });
      hooks.push(hook);
    }
    process.stdout.write(
      `# ${machineConditions()}; ${HOOKS} mailhooks, each bound to a one-step instant scenario; nodemailer client in the bench process, ${CONNECTIONS} pooled SMTP connections\n`,
    );

    // Small emails, as many as the connections carry for SMALL_SECONDS.
    let accepted = 0;
    let deferred = 0;
    let failed = 0;
    const latencies: number[] = [];
    const deadline = Date.now() + SMALL_SECONDS * 1000;
    const started = Date.now();
    const sender = async (): Promise<void> => {
      while (Date.now() < deadline) {
        const hook = hooks[Math.floor(Math.random() * hooks.length)]!;
        const at = performance.now();
        try {
          await transport.sendMail({
            from: 'Ada <ada@example.org>',
            to: hook.address,
            subject: `Order ${accepted}`,
            text: 'A small order, please process it.',
          });
          accepted++;
          latencies.push(performance.now() - at);
        } catch (error) {
          if ((error as { responseCode?: number }).responseCode === 451) deferred++;
          else failed++;
        }
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS * 2 }, sender));
    const seconds = (Date.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    printFigure(
      'mailhooks.small_accepted_per_s',
      accepted / seconds,
      'emails/s',
      '≥ 200',
      `${accepted} answered 250 in ${seconds.toFixed(1)} s, ${deferred} deferred (451, a hook past 30/s), ${failed} failed; 250 after p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`,
    );

    // One big email at a time: 18 MiB of attachment, about 25 MB once base64-encoded (line breaks included).
    const attachment = Buffer.alloc(18 * 1024 * 1024);
    for (let index = 0; index < attachment.length; index++) attachment[index] = (index * 31) & 0xff;
    const bigTimes: number[] = [];
    let bigBytes = 0;
    for (let round = 0; round < BIG_ROUNDS; round++) {
      const at = performance.now();
      const info = (await transport.sendMail({
        from: 'ada@example.org',
        to: hooks[round]!.address,
        subject: `Big ${round}`,
        text: 'The archive is attached.',
        attachments: [
          { filename: 'archive.bin', content: attachment, contentType: 'application/octet-stream' },
        ],
      })) as { messageSize?: number };
      bigTimes.push(performance.now() - at);
      bigBytes = info.messageSize ?? bigBytes;
    }
    bigTimes.sort((a, b) => a - b);
    printFigure(
      'mailhooks.big_email_ms',
      bigTimes[bigTimes.length - 1]!,
      'ms',
      '≤ 5000',
      `the slowest of ${BIG_ROUNDS} emails of ${(bigBytes / 1_048_576).toFixed(1)} MiB (sending, parsing, attachment stored, event appended, 250); median ${percentile(bigTimes, 50).toFixed(0)} ms`,
    );
  } finally {
    transport.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});
