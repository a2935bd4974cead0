/**
 * Generates the typed clients under clients/ from the committed API description
 * (openapi/<current version>.json) with OpenAPI Generator (`npm run clients`; .ci/run and
 * `npm run release:clients` run it too). The generated code is not committed: what is reviewed is the
 * description and the recipes below, and clients/.gitignore keeps everything but the hand-written files out.
 *
 * The generator jar comes from Maven Central into ~/.m2 (`mvn dependency:get`) the first time; nothing is
 * downloaded while the platform runs. Each client is generated into a fresh directory, the hand-written
 * files (README, scenario, …: the `handWritten` list, also written to `.openapi-generator-ignore`) are
 * copied beside it, and the result replaces the generated files of clients/<language>: files the
 * generator no longer writes (a removed operation's) are deleted, build output is left alone. Last,
 * clients/generated.json records what the clients were generated from, so a test can tell a missing or
 * stale generation from a broken client.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { API_VERSION } from '../contracts/api/index';
import { releasedDocumentsDir } from './api-descriptions';

const run = promisify(execFile);

export const GENERATOR_VERSION = '7.25.0';
const ROOT = join(__dirname, '..');
export const CLIENTS_DIR = join(ROOT, 'clients');
/** Written after a complete generation (and removed before one starts): see generationSource. */
export const GENERATION_STAMP = join(CLIENTS_DIR, 'generated.json');
const GENERATOR_ARTIFACT = `org.openapitools:openapi-generator-cli:${GENERATOR_VERSION}`;
/** Where the clients send requests unless told otherwise: a platform started locally on its default port. */
const DEFAULT_SERVER = 'http://localhost:3000/api';

export type ClientLanguage = 'typescript' | 'python' | 'php' | 'go';

interface ClientRecipe {
  readonly language: ClientLanguage;
  readonly generator: string;
  /** Arguments after `generate -i <document> -g <generator> -o <dir>` (integrator-and-ecosystem notes §2). */
  readonly options: readonly string[];
  /** Kept across generations: written by hand, never by the generator. */
  readonly handWritten: readonly string[];
  /** Generator output the clients do not want (CI files of other hosts, git helper scripts). */
  readonly unwanted: readonly string[];
}

const GIT = ['--git-host', 'github.com', '--git-user-id', 'records-platform'];

export const CLIENTS: readonly ClientRecipe[] = [
  {
    language: 'typescript',
    generator: 'typescript-fetch',
    options: [
      ...GIT,
      '--git-repo-id',
      'records-platform',
      `--additional-properties=npmName=@records-platform/client,npmVersion=${API_VERSION}`,
    ],
    // tsconfig.json: the generated one compiles every .ts under the folder, the scenario included.
    handWritten: ['README.md', 'tsconfig.json', 'scenario/scenario.ts', 'scenario/tsconfig.json'],
    unwanted: ['git_push.sh', '.travis.yml'],
  },
  {
    language: 'python',
    generator: 'python',
    options: [
      ...GIT,
      '--git-repo-id',
      'records-platform',
      `--additional-properties=packageName=records_client,projectName=records-client,packageVersion=${API_VERSION}`,
    ],
    handWritten: ['README.md', 'scenario.py'],
    unwanted: ['git_push.sh', '.travis.yml', '.gitlab-ci.yml', '.github/workflows/python.yml'],
  },
  {
    language: 'php',
    generator: 'php-nextgen',
    options: [
      ...GIT,
      '--git-repo-id',
      'records-platform',
      '--additional-properties=invokerPackage=Records\\Client,composerPackageName=records-platform/client,' +
        `artifactVersion=${API_VERSION}`,
    ],
    handWritten: ['README.md', 'scenario.php', 'bootstrap.php'],
    unwanted: ['git_push.sh', '.travis.yml'],
  },
  {
    language: 'go',
    generator: 'go',
    options: [
      ...GIT,
      // The module path: the clients/go folder of the platform's repository.
      '--git-repo-id',
      'records-platform/clients/go',
      '--additional-properties=packageName=records,useOneOfDiscriminatorLookup=true,enumClassPrefix=true,' +
        'disallowAdditionalPropertiesIfNotPresent=false',
      '--type-mappings=number=float64',
    ],
    handWritten: ['README.md', 'scenario/main.go'],
    unwanted: ['git_push.sh', '.travis.yml'],
  },
];

/** The generator jar in the local Maven repository, fetched from Maven Central when it is not there yet. */
export async function generatorJar(): Promise<string> {
  const repository = process.env.MAVEN_REPOSITORY ?? join(homedir(), '.m2', 'repository');
  const jar = join(
    repository,
    'org/openapitools/openapi-generator-cli',
    GENERATOR_VERSION,
    `openapi-generator-cli-${GENERATOR_VERSION}.jar`,
  );
  if (!existsSync(jar)) {
    await run('mvn', [
      '-B',
      '-q',
      'dependency:get',
      `-Dartifact=${GENERATOR_ARTIFACT}`,
      '-Dtransitive=false',
    ]);
    if (!existsSync(jar)) throw new Error(`mvn dependency:get did not put ${GENERATOR_ARTIFACT} at ${jar}`);
  }
  return jar;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

const FORMATS_WITHOUT_PATTERN = new Set(['date-time', 'email', 'uuid', 'date', 'time']);

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Schema keywords the generators mishandle: a `pattern` beside a `format`, an array's `default`. */
function withoutMisreadKeywords(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutMisreadKeywords);
  if (!isObject(value)) return value;
  const dropPattern = typeof value.format === 'string' && FORMATS_WITHOUT_PATTERN.has(value.format);
  const dropDefault = value.type === 'array' && Array.isArray(value.default);
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !(dropPattern && key === 'pattern') && !(dropDefault && key === 'default'))
      .map(([key, inner]) => [key, withoutMisreadKeywords(inner)]),
  );
}

/**
 * The copy of the description the generators get (notes §2.2):
 * - no `webhooks`: with them every generator 7.25.0 replaces the untagged API by the webhook
 *   (OpenAPITools/openapi-generator#20346);
 * - no `pattern` beside a `format`: zod's long regexes for date-time and email end up as struct-tag
 *   validators the Go client cannot apply to a `time.Time`;
 * - no `default` on an array: php-nextgen 7.25.0 writes `["a", "b"]` as `[a, b]` (undefined constants, a
 *   fatal error when the model is built). Left out, the platform applies the default itself;
 * - no path item with its own `servers` (health, metrics, docs, MCP, `/.well-known`): they are served at
 *   the host's root, while a client has one base URL, the API's; nor the schemas only they used;
 * - no `additionalProperties: false` in the schemas only answers use: the Go client refuses an answer with
 *   a property its model lacks, so a property a later release adds (a compatible change) would break every
 *   Go program built before it. Request schemas keep it: they say what the platform accepts;
 * - a form body alone where an operation takes a form or JSON (`/auth/oauth/token`): given both, the Python
 *   and Go clients 7.25.0 encode the form but label it `application/json`, which the platform cannot read;
 * - an absolute server URL, so a client works against a local platform without configuration.
 */
export function documentForGenerators(document: JsonObject): JsonObject {
  const { webhooks: _webhooks, ...rest } = document;
  const paths = isObject(rest.paths) ? rest.paths : {};
  const apiPaths = Object.fromEntries(
    Object.entries(paths).filter(([, item]) => !(isObject(item) && item.servers !== undefined)),
  );
  const prepared = {
    ...rest,
    servers: [{ url: DEFAULT_SERVER, description: 'A platform started locally on its default port.' }],
    paths: Object.fromEntries(
      Object.entries(apiPaths).map(([path, item]) => [path, isObject(item) ? withFormsAlone(item) : item]),
    ),
  };
  return withoutMisreadKeywords(withOpenAnswers(withoutOrphanSchemas(prepared))) as JsonObject;
}

/** Only the component schemas the remaining operations use: the generators write a model for every one. */
function withoutOrphanSchemas(document: JsonObject): JsonObject {
  const components = isObject(document.components) ? document.components : {};
  const { schemas = {}, ...others } = components;
  if (!isObject(schemas)) return document;
  const used = schemasReachable([document.paths ?? null, others], schemas);
  return {
    ...document,
    components: {
      ...components,
      schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name))),
    },
  };
}

const FORMS = ['application/x-www-form-urlencoded', 'multipart/form-data'];

function withFormsAlone(pathItem: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.entries(pathItem).map(([method, operation]) => {
      if (!isObject(operation) || !isObject(operation.requestBody)) return [method, operation];
      const content = operation.requestBody.content;
      if (!isObject(content) || !FORMS.some((type) => type in content) || !('application/json' in content))
        return [method, operation];
      const { 'application/json': _json, ...forms } = content;
      return [method, { ...operation, requestBody: { ...operation.requestBody, content: forms } }];
    }),
  );
}

const SCHEMA_REF = '#/components/schemas/';

/** The component schemas `value` names, directly or through the schemas it names. */
function schemasReachable(value: Json, schemas: JsonObject): Set<string> {
  const found = new Set<string>();
  const visit = (node: Json): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (isObject(node)) {
      const ref = node.$ref;
      if (typeof ref === 'string' && ref.startsWith(SCHEMA_REF)) {
        const name = ref.slice(SCHEMA_REF.length);
        if (!found.has(name) && schemas[name] !== undefined) {
          found.add(name);
          visit(schemas[name]);
        }
      }
      Object.values(node).forEach(visit);
    }
  };
  visit(value);
  return found;
}

function withoutClosedObjects(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutClosedObjects);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, inner]) => !(key === 'additionalProperties' && inner === false))
      .map(([key, inner]) => [key, withoutClosedObjects(inner)]),
  );
}

function withOpenAnswers(document: JsonObject): JsonObject {
  const components = isObject(document.components) ? document.components : {};
  const schemas = isObject(components.schemas) ? components.schemas : {};
  const operations = Object.values(isObject(document.paths) ? document.paths : {}).flatMap((item) =>
    isObject(item) ? Object.values(item).filter(isObject) : [],
  );
  const answers = operations.map((operation) => operation.responses ?? null);
  const requests = operations.map(({ responses: _responses, ...request }) => request);
  const { schemas: _schemas, responses = null, ...requestComponents } = components;
  const asked = schemasReachable([...requests, requestComponents], schemas);
  const answered = schemasReachable([...answers, responses], schemas);
  const openSchemas = Object.fromEntries(
    Object.entries(schemas).map(([name, schema]) => [
      name,
      answered.has(name) && !asked.has(name) ? withoutClosedObjects(schema) : schema,
    ]),
  );
  const openPaths = Object.fromEntries(
    Object.entries(isObject(document.paths) ? document.paths : {}).map(([path, item]) => [
      path,
      isObject(item)
        ? Object.fromEntries(
            Object.entries(item).map(([method, operation]) => [
              method,
              isObject(operation) && operation.responses !== undefined
                ? { ...operation, responses: withoutClosedObjects(operation.responses) }
                : operation,
            ]),
          )
        : item,
    ]),
  );
  return { ...document, paths: openPaths, components: { ...components, schemas: openSchemas } };
}

export function currentDocumentFile(): string {
  return join(releasedDocumentsDir(), `${API_VERSION}.json`);
}

/** The description as the generators read it. */
function preparedDocument(documentFile: string): string {
  const document = JSON.parse(readFileSync(documentFile, 'utf8')) as JsonObject;
  return `${JSON.stringify(documentForGenerators(document), null, 2)}\n`;
}

/** What a generation of clients/ is made from, besides the hand-written files edited in place there. */
export interface GenerationSource {
  readonly document: string;
  readonly generator: string;
  /** SHA-256 of the description as the generators read it and of the recipes. */
  readonly inputs: string;
}

export function generationSource(documentFile: string = currentDocumentFile()): GenerationSource {
  return {
    document: relative(ROOT, documentFile),
    generator: GENERATOR_VERSION,
    inputs: createHash('sha256')
      .update(preparedDocument(documentFile))
      .update(JSON.stringify(CLIENTS))
      .digest('hex'),
  };
}

function ignoreFile(recipe: ClientRecipe): string {
  return [
    '# Written by bin/generate-clients.ts (`npm run clients`); edit the lists there.',
    '# Hand-written, kept across generations:',
    ...recipe.handWritten,
    '# Generator output this client does not ship:',
    ...recipe.unwanted,
    '',
  ].join('\n');
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  const walk = (current: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else found.push(relative(dir, path));
    }
  };
  walk(dir);
  return found.sort();
}

/** The files the generator wrote last time, as it listed them. */
function generatedFiles(dir: string): string[] {
  const list = join(dir, '.openapi-generator', 'FILES');
  if (!existsSync(list)) return [];
  const listed = readFileSync(list, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  return [...listed, '.openapi-generator/FILES', '.openapi-generator/VERSION'];
}

function copyInto(fromDir: string, toDir: string, file: string): void {
  mkdirSync(dirname(join(toDir, file)), { recursive: true });
  copyFileSync(join(fromDir, file), join(toDir, file));
}

function removeEmptyFolders(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = join(dir, entry.name);
    removeEmptyFolders(path);
    if (readdirSync(path).length === 0) rmdirSync(path);
  }
}

/** What the generator said went wrong, without its stack traces (they run to hundreds of lines). */
function generatorComplaints(error: unknown): string {
  const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
  const lines = `${stdout}\n${stderr}`
    .split('\n')
    .filter((line) => /ERROR|Exception|Errors:|^\s*-|^\s*\|/.test(line) && !/^\s+at /.test(line));
  const unique = [...new Set(lines)];
  return unique.length > 0 ? unique.slice(0, 40).join('\n') : stderr.split('\n').slice(-40).join('\n');
}

async function generateOne(
  jar: string,
  documentFile: string,
  recipe: ClientRecipe,
  outDir: string,
  handWrittenFrom: string,
): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, '.openapi-generator-ignore'), ignoreFile(recipe));
  for (const file of recipe.handWritten) {
    if (!existsSync(join(handWrittenFrom, file)))
      throw new Error(`clients/${recipe.language}/${file} is missing (it is written by hand, not generated)`);
    copyInto(handWrittenFrom, outDir, file);
  }
  try {
    await run(
      'java',
      ['-jar', jar, 'generate', '-i', documentFile, '-g', recipe.generator, '-o', outDir, ...recipe.options],
      { maxBuffer: 64 * 1024 * 1024 },
    );
  } catch (error) {
    throw new Error(`OpenAPI Generator (${recipe.generator}) failed:\n${generatorComplaints(error)}`);
  }
  // The generated go.mod lists no requirements and its go.sum is a template: `go mod tidy` writes both from
  // the module graph (resolved through the Go module proxy), so they depend on nothing else.
  if (recipe.language === 'go') {
    rmSync(join(outDir, 'go.sum'));
    await run('go', ['mod', 'tidy'], { cwd: outDir });
  }
}

/**
 * Generates every client into `<targetRoot>/<language>` (a fresh folder each), with the hand-written
 * files taken from `<handWrittenRoot>/<language>`.
 */
export async function generateClients(
  targetRoot: string,
  handWrittenRoot: string = CLIENTS_DIR,
  documentFile: string = currentDocumentFile(),
): Promise<void> {
  const jar = await generatorJar();
  const work = mkdtempSync(join(tmpdir(), 'records-clients-document-'));
  try {
    const prepared = join(work, 'openapi.json');
    writeFileSync(prepared, preparedDocument(documentFile));
    await Promise.all(
      CLIENTS.map((recipe) =>
        generateOne(
          jar,
          prepared,
          recipe,
          join(targetRoot, recipe.language),
          join(handWrittenRoot, recipe.language),
        ),
      ),
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Replaces the generated files of `clients/<language>` by a fresh generation's: the files the generator
 * listed last time and no longer writes go, build output and local toolchains (the Python venv) stay.
 */
function replaceGenerated(fresh: string, target: string): void {
  const next = new Set(filesUnder(fresh));
  for (const file of generatedFiles(target)) if (!next.has(file)) rmSync(join(target, file), { force: true });
  for (const file of next) copyInto(fresh, target, file);
  removeEmptyFolders(target);
}

/** Generates every client into clients/<language> and stamps the result (`npm run clients`). */
export async function writeClients(): Promise<void> {
  rmSync(GENERATION_STAMP, { force: true });
  const fresh = mkdtempSync(join(tmpdir(), 'records-clients-'));
  try {
    await generateClients(fresh);
    for (const { language } of CLIENTS) {
      mkdirSync(join(CLIENTS_DIR, language), { recursive: true });
      replaceGenerated(join(fresh, language), join(CLIENTS_DIR, language));
    }
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
  writeFileSync(GENERATION_STAMP, `${JSON.stringify(generationSource(), null, 2)}\n`);
}

async function main(): Promise<void> {
  const started = Date.now();
  await writeClients();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(
    `clients/{${CLIENTS.map((c) => c.language).join(',')}} generated from openapi/${API_VERSION}.json ` +
      `with OpenAPI Generator ${GENERATOR_VERSION} in ${seconds} s\n`,
  );
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`clients: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
