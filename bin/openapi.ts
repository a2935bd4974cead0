/**
 * The API description's tool:
 *   write              writes openapi/<current version>.json from the route table
 *   check              fails when the committed document of the current version differs from the route table's
 *   diff <from> <to>   prints what changed between two versions (`current` names the route table's document)
 *   release <version>  makes <version> the current one: package.json, contracts/api/index.ts, its document and
 *                      the changelog. The typed clients are not committed: `npm run release:clients` makes them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_VERSION } from '../contracts/api/index';
import { describeChanges, diffDocuments, type OpenApiLike } from '../contracts/api/diff';
import { currentDocumentJson, releasedDocumentsDir } from './api-descriptions';

/** The checkout the command reads and edits (OPENAPI_ROOT: another one, such as a copy in a test). */
const ROOT = process.env.OPENAPI_ROOT ?? join(__dirname, '..');
const VERSION = /^(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)$/;

function documentPath(version: string): string {
  const dir = process.env.OPENAPI_ROOT === undefined ? releasedDocumentsDir() : join(ROOT, 'openapi');
  return join(dir, `${version}.json`);
}

function readDocument(version: string): OpenApiLike {
  const json = version === 'current' ? currentDocumentJson() : readFileSync(documentPath(version), 'utf8');
  return JSON.parse(json) as OpenApiLike;
}

function fail(message: string): never {
  process.stderr.write(`openapi: ${message}\n`);
  process.exit(1);
}

function write(): void {
  writeFileSync(documentPath(API_VERSION), currentDocumentJson());
  process.stdout.write(`wrote openapi/${API_VERSION}.json\n`);
}

function check(): void {
  let committed: string;
  try {
    committed = readFileSync(documentPath(API_VERSION), 'utf8');
  } catch {
    fail(`openapi/${API_VERSION}.json is missing: run \`npm run openapi\` and commit it`);
  }
  if (committed !== currentDocumentJson()) {
    const changes = describeChanges(
      diffDocuments(JSON.parse(committed) as OpenApiLike, readDocument('current')),
    );
    fail(
      `openapi/${API_VERSION}.json differs from the route table:\n${changes.join('\n') || '  (only descriptions or schemas changed)'}\n` +
        'Run `npm run openapi` and review the change (or `npm run release -- <version>` for a new version).',
    );
  }
  process.stdout.write(`openapi/${API_VERSION}.json is current\n`);
}

function diff(from: string | undefined, to: string | undefined): void {
  if (from === undefined || to === undefined)
    fail('usage: npm run openapi:diff -- <from> <to> (a version or `current`)');
  const changes = describeChanges(diffDocuments(readDocument(from), readDocument(to)));
  process.stdout.write(
    `${from} → ${to}\n${changes.length === 0 ? '  no changes\n' : `${changes.join('\n')}\n`}`,
  );
}

function release(version: string | undefined): void {
  if (version === undefined || !VERSION.test(version)) fail('usage: npm run release -- <major.minor.patch>');
  if (version === API_VERSION) fail(`${version} is already the current version`);
  const changes = describeChanges(diffDocuments(readDocument(API_VERSION), readDocument('current')));
  const indexPath = join(ROOT, 'contracts', 'api', 'index.ts');
  const index = readFileSync(indexPath, 'utf8');
  writeFileSync(indexPath, index.replace(`API_VERSION = '${API_VERSION}'`, `API_VERSION = '${version}'`));
  const manifestPath = join(ROOT, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
  writeFileSync(manifestPath, `${JSON.stringify({ ...manifest, version }, null, 2)}\n`);
  writeFileSync(documentPath(version), currentDocumentJson(version));
  const changelogPath = join(ROOT, 'CHANGELOG.md');
  const changelog = readFileSync(changelogPath, 'utf8');
  const entry = `## ${version}\n\n${changes.length === 0 ? '- No public surface changes.' : changes.map((line) => `- ${line.trim()}`).join('\n')}\n\n`;
  const firstEntry = changelog.indexOf('\n## ');
  writeFileSync(
    changelogPath,
    firstEntry < 0
      ? `${changelog}\n${entry}`
      : `${changelog.slice(0, firstEntry + 1)}${entry}${changelog.slice(firstEntry + 1)}`,
  );
  process.stdout.write(
    `API version ${API_VERSION} → ${version}: openapi/${version}.json written; contracts/api/index.ts, ` +
      'package.json and CHANGELOG.md updated. Review the changelog entry and commit; ' +
      '`npm run release:clients` builds the clients of this version into release/clients/.\n',
  );
}

const [command, ...args] = process.argv.slice(2);
if (command === 'write') write();
else if (command === 'check') check();
else if (command === 'diff') diff(args[0], args[1]);
else if (command === 'release') release(args[0]);
else fail('usage: openapi write | check | diff <from> <to> | release <version>');
