import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

// Registered by the test file that imports this module: its directories go once its tests are done, so runs
// (CI's on the same machine among them) do not pile them up in the system's temporary folder.
afterAll(() => {
  for (const directory of made.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A new directory under the system's temporary folder, named `<prefix>XXXXXX`, removed after the file's tests. */
export function temporaryDirectory(prefix: string): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  made.push(directory);
  return directory;
}
