const { existsSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

/**
 * Prints, after the run, how each adapter's contract suite ran (embedded, against a real server, or
 * skipped and why), then the plain "N passed, N failed" line CI reads.
 */
class SummaryReporter {
  constructor() {
    this.file = join(tmpdir(), `records-platform-adapters-${process.pid}.jsonl`);
    rmSync(this.file, { force: true });
    process.env.ADAPTER_REPORT_FILE = this.file;
  }

  onRunComplete(_contexts, results) {
    const lines = [];
    if (existsSync(this.file)) {
      const seen = new Map();
      for (const line of readFileSync(this.file, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        const { port, adapter, run } = JSON.parse(line);
        seen.set(`${port}/${adapter}`, run);
      }
      for (const [name, run] of [...seen.entries()].sort()) {
        const how =
          run.kind === 'embedded'
            ? 'ran (embedded)'
            : run.kind === 'real-server'
              ? `ran against a real server: ${run.where}`
              : `SKIPPED: ${run.reason}`;
        lines.push(`  ${name.padEnd(32)} ${how}`);
      }
      rmSync(this.file, { force: true });
    }
    if (lines.length > 0) process.stdout.write(`\nContract suites per adapter:\n${lines.join('\n')}\n`);
    const failed = results.numFailedTests;
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

module.exports = SummaryReporter;
