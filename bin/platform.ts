import { run } from './run';
import { EVERYTHING } from './wiring';

/** `npm start`: the whole platform in one process on the configured (by default embedded) adapters. */
async function main(): Promise<void> {
  const running = await run(EVERYTHING);
  const { config, logger, services, url } = running;
  logger.info(
    {
      url: `${url}/api`,
      dataDir: config.DATA_DIR,
      eventStore: config.EVENT_STORE,
      readStore: config.READ_STORE,
      stream: config.STREAM,
    },
    'records platform listening',
  );
  if (services.generatedToken) {
    process.stdout.write(
      `\nBootstrap admin ${config.ADMIN_EMAIL} of system "${config.DEFAULT_TENANT}" created.\n` +
        `Its API token (shown once, store it now):\n\n  ${services.generatedToken}\n\n` +
        `Try: curl -H "Authorization: Bearer <token>" ${url}/api/record\n\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
