import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { exited, output, spawnBin } from './child-platform';

/** Every file under `dir` (any depth) whose bytes contain `text`: where a plaintext still is. */
export function filesUnder(dir: string, text: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path, text);
    return readFileSync(path).includes(text) ? [path] : [];
  });
}

/** The files under `dir` that hold each of `texts`, for the texts some file holds (`{}`: none is anywhere). */
export function filesHolding(dir: string, texts: readonly string[]): Record<string, string[]> {
  return Object.fromEntries(
    texts.map((text) => [text, filesUnder(dir, text)] as const).filter(([, files]) => files.length > 0),
  );
}

/** Rebuilds `projections` from the log of the platform stopped at `dataDir` (`npm run replay`), each must pass. */
export async function replayAll(dataDir: string, projections: readonly string[]): Promise<void> {
  for (const projection of projections) {
    const replay = spawnBin('replay.ts', [projection], { DATA_DIR: dataDir });
    const logs = output(replay);
    expect({ projection, code: await exited(replay), logs: logs().slice(-500) }).toMatchObject({ code: 0 });
  }
}
