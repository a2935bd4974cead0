import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoreFilter } from '../languages/filter/store-query';
import { compileLikeMatcher } from '../languages/filter/like-pattern';
import { createSqliteReadStore } from '../infra/read-store/sqlite';
import { machineConditions, percentile, printFigure } from './report';

/**
 * Worst-case `~` (LIKE) filters on the SQLite read store: 10,000 documents with long values, patterns
 * with many `%` pieces that every value nearly matches. The former backtracking RegExp did not finish
 * these (time grows as the value length to the power of the number of pieces), so there is no "before".
 */
const ROWS = Number(process.env.BENCH_LIKE_ROWS ?? 10_000);
const VALUE_LENGTH = Number(process.env.BENCH_LIKE_VALUE_LENGTH ?? 2_000);
const ROUNDS = 5;

const like = (pattern: string): StoreFilter => ({ kind: 'like', path: 'name', pattern, negate: false });

const WORST_CASES: readonly (readonly [string, string, string])[] = [
  ['like_60_pieces_ascii', 'ascii', `${'%a'.repeat(60)}%b`],
  ['like_30_overlapping_pieces_ascii', 'ascii', `${'%aaaaaaab'.repeat(30)}%`],
  ['like_60_pieces_non_ascii', 'accented', `${'%É'.repeat(60)}%b`],
];

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-like-'));
  const store = createSqliteReadStore({ path: join(dir, 'read-models.db') });
  try {
    for (const [collection, letter] of [
      ['ascii', 'a'],
      ['accented', 'é'],
    ] as const) {
      for (let start = 0; start < ROWS; start += 1000) {
        await store.apply(
          Array.from({ length: Math.min(1000, ROWS - start) }, (_, offset) => ({
            op: 'upsert' as const,
            collection,
            position: 1n,
            doc: { id: `d${start + offset}`, name: `${letter.repeat(VALUE_LENGTH)}${start + offset}` },
          })),
        );
      }
    }
    const conditions = `${ROWS} rows of ${VALUE_LENGTH}+ characters, median of ${ROUNDS}; ${machineConditions()}`;
    for (const [name, collection, pattern] of WORST_CASES) {
      const times: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const started = process.hrtime.bigint();
        const found = await store.find(collection, { filter: like(pattern), limit: 100 });
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
        if (found.total !== 0) throw new Error(`${name}: expected no match, got ${found.total}`);
      }
      times.sort((a, b) => a - b);
      printFigure(`sqlite_${name}`, percentile(times, 50), 'ms', undefined, conditions);
    }

    // The matcher alone on the class: 100 pieces over one 100,000-character value.
    const matches = compileLikeMatcher(`${'%a'.repeat(100)}%b`);
    const value = 'a'.repeat(100_000);
    const times: number[] = [];
    for (let round = 0; round < 20; round++) {
      const started = process.hrtime.bigint();
      if (matches(value)) throw new Error('expected no match');
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    times.sort((a, b) => a - b);
    printFigure(
      'like_matcher_100_pieces_100k_value',
      percentile(times, 50),
      'ms',
      undefined,
      machineConditions(),
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
