import type { Server } from 'node:http';
import { loadConfig, type Config } from '../infra/config';
import { closeGracefully, createHttpServer } from '../infra/http/server';
import { createLogger, type Logger } from '../infra/logging';
import { startCheckpointerFor } from './sqlite-checkpointer';
import { MAIL_MAX_BYTES } from '../contracts/integrator';
import { startMailListener } from '../infra/smtp/mail-listener';
import { openAdapters } from './adapters';
import { mailDomain } from './kernel';
import { buildServices, type ServiceSelection, type Services } from './wiring';

export interface Running {
  readonly config: Config;
  readonly logger: Logger;
  readonly services: Services;
  readonly server: Server;
  readonly url: string;
  /** The port of the mailhook SMTP listener, where this process runs one. */
  readonly smtpPort?: number;
  stop(): Promise<void>;
}

/** How long a stop lets the requests in progress finish: within the usual 10 s before a SIGKILL follows. */
const HTTP_DRAIN_MS = 5_000;

/** Opens the adapters, builds the selected services and listens; SIGTERM/SIGINT stop it cleanly. */
export async function run(
  selection: ServiceSelection,
  env: NodeJS.ProcessEnv = process.env,
  handleSignals = true,
): Promise<Running> {
  const config = loadConfig(env);
  const logger = createLogger(config.LOG_LEVEL);
  const adapters = await openAdapters(config, logger);
  const checkpointer = await startCheckpointerFor(config, logger);
  const services = await buildServices(config, logger, adapters, selection);
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = createHttpServer(services.app, {
      headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
      idleTimeoutMs: config.HTTP_IDLE_TIMEOUT_MS,
    });
    listening.once('error', reject);
    listening.listen(config.PORT, config.HOST, () => resolve(listening));
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const url = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`;
  const mail =
    services.mail &&
    (await startMailListener(services.mail, {
      port: config.SMTP_PORT,
      host: config.SMTP_HOST ?? config.HOST,
      maxBytes: MAIL_MAX_BYTES,
      maxClients: config.SMTP_MAX_CLIENTS,
      maxClientsPerAddress: config.SMTP_MAX_CLIENTS_PER_ADDRESS,
      proxyProtocol: config.SMTP_PROXY_PROTOCOL,
      name: mailDomain(config),
      logger: logger.child({ component: 'smtp' }),
    }));
  if (mail) logger.info({ port: mail.port, domain: mailDomain(config) }, 'mailhook SMTP listener ready');
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      await Promise.all([closeGracefully(server, HTTP_DRAIN_MS), mail?.close(), services.drain()]);
      await services.stop();
      await adapters.close();
      await checkpointer?.stop();
    })());
  if (handleSignals) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        logger.info({ signal }, 'shutting down');
        stop().then(
          () => process.exit(0),
          (error: unknown) => {
            logger.error({ err: error }, 'shutdown failed');
            process.exit(1);
          },
        );
      });
    }
  }
  return { config, logger, services, server, url, ...(mail && { smtpPort: mail.port }), stop };
}
