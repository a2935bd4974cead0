import { cpus, totalmem } from 'node:os';

/** One figure per line, greppable: `figure <name> = <value> <unit> [target] (notes)`. */
export function printFigure(
  name: string,
  value: number,
  unit: string,
  target?: string,
  notes?: string,
): void {
  const shown = Number.isInteger(value) ? String(value) : value.toFixed(value < 10 ? 3 : 1);
  const parts = [`figure ${name} = ${shown} ${unit}`];
  if (target) parts.push(`[target ${target}]`);
  if (notes) parts.push(`(${notes})`);
  process.stdout.write(parts.join(' ') + '\n');
}

export function machineConditions(): string {
  const cpu = cpus();
  return `${cpu.length} cores ${cpu[0]?.model ?? 'unknown'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`;
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function percentile(sortedMs: readonly number[], p: number): number {
  if (sortedMs.length === 0) return NaN;
  const index = Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1);
  return sortedMs[Math.max(0, index)]!;
}

/**
 * A benchmark's main over the embedded SQLite store (unless `BENCH_SKIP_SQLITE`) and, when `MONGO_URL` names a
 * MongoDB-wire server, over it too; a failure prints and exits 1.
 */
export function runOnBothStores(
  figures: string,
  sqlite: () => Promise<void>,
  mongodb: (url: string) => Promise<void>,
): void {
  (async () => {
    if (process.env.BENCH_SKIP_SQLITE === undefined) await sqlite();
    const mongoUrl = process.env.MONGO_URL;
    if (!mongoUrl) {
      process.stdout.write(`skipped ${figures}_*_mongodb: MONGO_URL is not set (no MongoDB-wire server)\n`);
      return;
    }
    await mongodb(mongoUrl);
  })().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
