import { run } from './run';
import { SERVICES } from './services';

/**
 * Starts one service alone (for the production stack): `command-api`, `query-api`, `projections` (read models
 * and the relay to the stream) or `integrator` (scenario runs from the stream, as a consumer group member). Adapters come from the environment as for `npm start`.
 */
async function main(): Promise<void> {
  const name = process.argv[2] ?? '';
  const selection = SERVICES[name];
  if (!selection) {
    process.stderr.write(`usage: npm run service -- <${Object.keys(SERVICES).join('|')}>\n`);
    process.exit(2);
  }
  const { logger, url, services } = await run(selection);
  logger.info({ service: name, url }, 'service listening');
  if (services.generatedToken)
    process.stdout.write(`\nBootstrap admin API token (shown once): ${services.generatedToken}\n\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
