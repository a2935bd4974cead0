import { appendFileSync } from 'node:fs';

export type AdapterRun =
  | { readonly kind: 'embedded' }
  | { readonly kind: 'real-server'; readonly where: string }
  | { readonly kind: 'skipped'; readonly reason: string };

/** Records how a contract suite ran; the summary reporter prints one line per adapter at the end. */
export function reportAdapter(port: string, adapter: string, run: AdapterRun): void {
  const file = process.env.ADAPTER_REPORT_FILE;
  if (!file) return;
  appendFileSync(file, JSON.stringify({ port, adapter, run }) + '\n');
}

/**
 * Declares a port's contract suite for one adapter. When the adapter's server is not configured the suite
 * is registered as a `todo` that names the reason, so the skip shows in the test output and the summary.
 */
export function describeContract(
  port: string,
  adapter: string,
  availability: AdapterRun,
  suite: () => void,
): void {
  reportAdapter(port, adapter, availability);
  const where =
    availability.kind === 'embedded'
      ? 'embedded'
      : availability.kind === 'real-server'
        ? `real server ${availability.where}`
        : `SKIPPED: ${availability.reason}`;
  if (availability.kind === 'skipped') {
    describe(`${port} contract — ${adapter} (${where})`, () => {
      test.todo(`${port} contract against ${adapter} not run: ${availability.reason}`);
    });
    return;
  }
  describe(`${port} contract — ${adapter} (${where})`, suite);
}

/** How the MongoDB-wire suites run: against `MONGO_URL` (shown without credentials), or skipped without it. */
export function mongoAvailability(url: string | undefined): AdapterRun {
  return url
    ? { kind: 'real-server', where: url.replace(/\/\/[^@/]*@/, '//***@') }
    : { kind: 'skipped', reason: 'MONGO_URL not set' };
}
