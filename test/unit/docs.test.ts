import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { configSchema } from '../../infra/config';

/**
 * The README and docs/ send readers only to what is in the repository: every link resolves to a file (and a
 * heading, when it names one), every source path they quote exists, nothing points at files beside the
 * repository, and the configuration table lists exactly the settings the code reads.
 */
const ROOT = join(__dirname, '..', '..');
const DOCUMENTS = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)].filter(
  (file) => file.endsWith('.md'),
);
const text = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const headings = [...text(file).matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) => anchorOf(heading!));
  return new Set(headings);
}

test('there are documents to check', () => {
  expect(DOCUMENTS).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/operations.md']));
});

test.each(DOCUMENTS)(
  'every link of %s leads to a file of the repository, and to a heading it names',
  (file) => {
    const broken: string[] = [];
    for (const [, target] of text(file).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) {
        broken.push(`${target}: links outside the repository`);
        continue;
      }
      const [path, anchor] = target!.split('#');
      const resolved = path ? resolve(ROOT, dirname(file), path) : join(ROOT, file);
      if (relative(ROOT, resolved).startsWith('..') || !existsSync(resolved)) {
        broken.push(`${target}: no such file in the repository`);
      } else if (anchor !== undefined && !anchorsOf(relative(ROOT, resolved)).has(anchor)) {
        broken.push(`${target}: no heading #${anchor}`);
      }
    }
    expect(broken).toEqual([]);
  },
);

test.each(DOCUMENTS)('every source path %s quotes exists, and none lies outside the repository', (file) => {
  const quoted = [...text(file).matchAll(/`([^`\s]+)`/g)].map(([, path]) => path!);
  const sourcePaths = quoted.filter((path) =>
    /^(contracts|command-api|query-api|projections|infra|bin|test|bench|docs|\.ci)\/[\w./-]*$/.test(path),
  );
  expect(sourcePaths.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  expect(text(file)).not.toMatch(/(^|[\s`(])(\.\.\/)+shared\b|(^|[\s`(])shared\/|\/work\//m);
});

test('the configuration table lists exactly the settings the code reads', () => {
  const readme = text('README.md');
  const section = readme.slice(readme.indexOf('## Configuration'));
  const table = section.slice(0, section.indexOf('\n## '));
  const documented = [...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map(([, name]) => name!);
  expect([...documented].sort()).toEqual(Object.keys(configSchema.shape).sort());
});

test('every dependency is in docs/dependencies.md with why it is there (type packages aside)', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const table = readFileSync(join(ROOT, 'docs', 'dependencies.md'), 'utf8');
  const named = new Set(
    [...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap(([, cell]) =>
      cell!.split(',').map((part) => part.trim().split(' ')[0]!),
    ),
  );
  const packages = [...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies)].filter(
    (name) => !name.startsWith('@types/'),
  );
  expect(packages.filter((name) => !named.has(name))).toEqual([]);
});
