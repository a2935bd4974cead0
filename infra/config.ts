import { z } from 'zod';
import { socialLoginSchema } from '../contracts/social';
import { ipAllowlistText } from '../contracts/ip-allowlist';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const tenantQuotas = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'TENANT_QUOTAS must be JSON like {"acme": 600}' });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string(), z.number().int().positive()));

const socialLogin = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: 'SOCIAL_LOGIN must be JSON like {"google": {"clientId": "…", "clientSecret": "…"}}',
      });
      return z.NEVER;
    }
  })
  .pipe(socialLoginSchema);

/** Every environment variable the platform reads. The README's configuration reference mirrors this. */
export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('./data'),
  BASE_HOST: z.string().default('localhost'),
  /**
   * The platform's address as clients reach it: scheme, BASE_HOST and port, such as `https://records.example.com`
   * (a system's is `<system>.` before the host). What the platform publishes about itself names it, never a
   * request's Host header. Unset: `http://<BASE_HOST>:<the port the request came in on>`.
   */
  PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .refine(
      (url) => URL.canParse(url) && new URL(url).origin === url.replace(/\/$/, ''),
      'must be an origin: no path, query or fragment',
    )
    .optional(),
  DEFAULT_TENANT: z.string().default('test'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  EVENT_STORE: z.enum(['sqlite', 'eventstoredb']).default('sqlite'),
  ESDB_URL: z.string().optional(),
  SQLITE_SYNCHRONOUS: z.enum(['NORMAL', 'FULL']).default('NORMAL'),
  READ_STORE: z.enum(['sqlite', 'mongodb']).default('sqlite'),
  MONGO_URL: z.string().optional(),
  MONGO_DATABASE: z.string().default('records_platform'),
  STREAM: z.enum(['in-process', 'kafka']).default('in-process'),
  KAFKA_BROKERS: z.string().optional(),
  /**
   * The most bytes one send puts in a partition's batch, below the broker's `message.max.bytes`: larger
   * publishes go in parts, and an event larger than this is relayed without its data (read from the store).
   */
  KAFKA_MAX_BATCH_BYTES: z.coerce.number().int().min(10_000).max(100_000_000).default(900_000),
  EVENTS_TOPIC: z.string().default('records-platform.events'),
  ADMIN_EMAIL: z.email().default('admin@example.com'),
  ADMIN_PASSWORD: z.string().min(12).optional(),
  ADMIN_TOKEN: z.string().min(24).optional(),
  BODY_LIMIT: z.string().default('1mb'),
  /** The longest a client may take to send a request's headers; then it is answered 408 and closed. */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000),
  /** The longest a client may take to send a whole request, body included (uploads too); then 408. */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(120_000),
  /** A connection on which nothing moves either way for this long is closed (a client that stops reading). */
  HTTP_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  QUOTA_CALLS_PER_MINUTE: z.coerce.number().int().positive().optional(),
  TENANT_QUOTAS: tenantQuotas.optional(),
  MIN_POSITION_TIMEOUT_MS: z.coerce.number().int().min(0).max(60000).default(5000),
  /** The longest one read query may run before it is refused with 422 E4220 (a bound on one reader's work). */
  QUERY_BUDGET_MS: z.coerce.number().int().min(10).max(60000).default(2000),
  /** How many records a list as of a moment counts at most (`meta.totalRelation` `gte` beyond it). */
  PAST_LIST_COUNT_CAP: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  /** Threads that run the embedded (SQLite) read store's list and count queries, off the thread that answers. */
  READ_THREADS: z.coerce.number().int().min(1).max(8).default(1),
  /** List and count queries one system may have waiting for a read thread; more are refused with 429. */
  READ_QUEUE_PER_SYSTEM: z.coerce.number().int().min(1).max(1000).default(8),
  /** Bearer token `/metrics` requires; unset: `/metrics` answers only direct connections from this host. */
  METRICS_TOKEN: z.string().min(24).optional(),
  /**
   * Where the MCP tool server sends its tool calls when this process does not serve both APIs (the command-api
   * service behind the compose gateway): the API's base URL, such as `http://gateway:8080`.
   */
  MCP_API_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** MCP sessions the server holds open at once, over every system. */
  MCP_MAX_SESSIONS: z.coerce.number().int().min(1).max(100_000).default(2000),
  /** MCP sessions one system's credentials hold at once: its share of MCP_MAX_SESSIONS. */
  MCP_SESSIONS_PER_SYSTEM: z.coerce.number().int().min(1).max(100_000).default(200),
  /** MCP sessions one user of a system holds at once, over all their credentials. */
  MCP_SESSIONS_PER_USER: z.coerce.number().int().min(1).max(100_000).default(32),
  /** MCP sessions one credential (token, OAuth grant, session) holds at once. */
  MCP_SESSIONS_PER_CREDENTIAL: z.coerce.number().int().min(1).max(100_000).default(16),
  /** An MCP session unused this long is ended, and its place in the caps given back. */
  MCP_SESSION_IDLE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 3600)
    .default(1800),
  OAUTH_INTROSPECTIONS_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(300),
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  PROJECTIONS_THREAD: booleanFlag.default(true),
  RELAY: booleanFlag.default(true),
  REBUILD_THREADS: z.coerce.number().int().min(0).max(8).default(2),
  /** Let outbound calls (button webhooks) reach private and loopback addresses: development only. */
  OUTBOUND_ALLOW_PRIVATE: booleanFlag.default(false),
  OUTBOUND_TIMEOUT_MS: z.coerce.number().int().min(100).max(60000).default(10000),
  /** Outgoing subscriptions one system may have. */
  SUBSCRIPTIONS_PER_SYSTEM: z.coerce.number().int().min(1).max(10_000).default(100),
  /** Base64 of 32 random bytes: seals TOTP seeds at rest. Unset: DATA_DIR/secrets.key, made on first start. */
  SECRETS_KEY: z
    .string()
    .refine((value) => Buffer.from(value, 'base64').length === 32, 'must be base64 of 32 bytes')
    .optional(),
  /**
   * A KMS keeps the key-encryption key of the data keys personal values are sealed under (infra/keys/kms.ts):
   * the key's id, ARN or alias in AWS KMS, or in a server that speaks its API (`KMS_ENDPOINT`). Unset: the
   * key-encryption key is derived from SECRETS_KEY.
   */
  KMS_KEY_ID: z.string().min(1).max(2048).optional(),
  /** The key-encryption key as the KMS encrypted it (base64), made once by `npm run kms:new-key`. */
  KMS_WRAPPED_KEY: z.string().min(1).max(8192).optional(),
  KMS_REGION: z
    .string()
    .regex(/^[a-z0-9-]{1,40}$/, 'must be a region name')
    .default('eu-west-1'),
  KMS_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  /** Social sign-in providers and their OAuth client credentials (see contracts/social.ts). */
  SOCIAL_LOGIN: socialLogin.optional(),
  SESSION_IDLE_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .default(20),
  SESSION_MAX_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(12),
  /**
   * The address hooks are published under (`{hook_url}`): a hook's URL is `<HOOK_BASE_URL>/<hook id>`. Unset:
   * `http://<BASE_HOST>:<PORT>/hook`, served by this platform. Hooks are served on its host name alone (unset:
   * the base host), never on a system's host.
   */
  HOOK_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * Proxies whose `X-Forwarded-For` the webhook receiver believes (addresses and CIDR ranges, comma-separated):
   * the caller's address is the nearest hop not among them. Unset: the connection's address, always.
   */
  HOOK_TRUSTED_PROXIES: ipAllowlistText.default(''),
  /** How long webhook logs are kept (Make keeps them 3 days). */
  HOOK_LOG_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 365)
    .default(72),
  /** Whether the integrator listens for mailhook email (SMTP): on in the one process and the integrator service. */
  SMTP_ENABLED: booleanFlag.default(true),
  /** The port of the mailhook SMTP listener (0: any free port); 25 needs privileges or a port redirect. */
  SMTP_PORT: z.coerce.number().int().min(0).max(65535).default(2525),
  /** The address the SMTP listener binds to; unset: HOST. */
  SMTP_HOST: z.string().optional(),
  /** SMTP connections the listener holds at once; more are turned away with 421 until some close. */
  SMTP_MAX_CLIENTS: z.coerce.number().int().min(1).max(10_000).default(200),
  /**
   * SMTP connections one sender (an IPv4 address, an IPv6 /64) holds at once, its share of SMTP_MAX_CLIENTS;
   * more are turned away with 421. Behind a TCP proxy without SMTP_PROXY_PROTOCOL every connection is the
   * proxy's: raise it to SMTP_MAX_CLIENTS there.
   */
  SMTP_MAX_CLIENTS_PER_ADDRESS: z.coerce.number().int().min(1).max(10_000).default(20),
  /**
   * Connections to the SMTP listener come through a TCP proxy that opens each with a PROXY protocol (v1)
   * header (the compose mail gateway): the sending server's address is read from it. Unset: none may.
   */
  SMTP_PROXY_PROTOCOL: booleanFlag.default(false),
  /** The domain of mailhook addresses (`<hook id>@<MAIL_DOMAIN>`); unset: BASE_HOST. */
  MAIL_DOMAIN: z
    .string()
    .regex(
      /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/,
      'must be a domain name such as hooks.example.com',
    )
    .optional(),
  /** Semantic search over records: the vector projection and the `/record/vector/…` routes (503 when off). */
  SEMANTIC_SEARCH: booleanFlag.default(true),
  /** Where vectors come from: the embedded sentence model (offline) or an OpenAI-compatible endpoint. */
  EMBEDDINGS: z.enum(['local', 'openai']).default('local'),
  /** Where vectors are kept: in `DATA_DIR/vectors.db`, searched in memory, or in Qdrant (`QDRANT_URL`). */
  VECTOR_INDEX: z.enum(['embedded', 'qdrant']).default('embedded'),
  QDRANT_URL: z.url({ protocol: /^https?$/ }).optional(),
  QDRANT_API_KEY: z.string().min(1).optional(),
  /** Put before the names of the platform's Qdrant collections, so that deployments sharing a server keep apart. */
  QDRANT_COLLECTION_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{0,64}$/, 'must be at most 64 letters, digits, _ or -')
    .default(''),
  /** The longest one call to Qdrant waits for its answer; then the search answers 503 (the projection retries). */
  QDRANT_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
  /** `EMBEDDINGS=local`: threads that run the model side by side (each holds it, about 230 MB). */
  EMBEDDING_THREADS: z.coerce.number().int().min(1).max(16).default(1),
  /**
   * `EMBEDDINGS=local`: the most of a core the vector projection's embedding takes while the process is busy
   * answering requests (it catches up at full speed when idle); 1 does not pace it.
   */
  EMBEDDING_BUSY_SHARE: z.coerce.number().gt(0).max(1).default(0.1),
  /** `EMBEDDINGS=openai`: the endpoint's base URL, `/v1` included. */
  EMBEDDINGS_URL: z.url({ protocol: /^https?$/ }).default('https://api.openai.com/v1'),
  EMBEDDINGS_API_KEY: z.string().min(1).optional(),
  EMBEDDINGS_MODEL: z.string().min(1).max(200).default('text-embedding-3-small'),
  /** The dimension the endpoint's model answers; a multiple of 16 (the embedded index scores 16 at a time). */
  EMBEDDINGS_DIMENSION: z.coerce
    .number()
    .int()
    .min(16)
    .max(8192)
    .refine((value) => value % 16 === 0, 'must be a multiple of 16')
    .default(1536),
  /** Send `dimensions` with each request (models that shorten their vectors, such as OpenAI's v3 models). */
  EMBEDDINGS_REQUEST_DIMENSION: booleanFlag.default(false),
  EMBEDDINGS_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** AI features: any OpenAI-compatible chat endpoint (`/v1` included); unset: the AI routes answer 501. */
  AI_URL: z.url({ protocol: /^https?$/ }).optional(),
  AI_API_KEY: z.string().min(1).optional(),
  AI_MODEL: z.string().min(1).max(200).default('gpt-4o-mini'),
  /** The longest one model call may take. */
  AI_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
  /** Model calls one execute job makes at once. */
  AI_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(8),
  /** Model calls one system's jobs make at once in one process (the others' jobs keep their share). */
  AI_TENANT_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  /** Model calls one credential (token, session, OAuth client) of a system makes at once in one process. */
  AI_CREDENTIAL_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  /** Model calls all jobs make at once in one process. */
  AI_MAX_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(64),
  /** How long a process holds an execute job without renewing; a job of a dead process resumes elsewhere after it. */
  AI_JOB_LEASE_MS: z.coerce.number().int().min(1000).max(3_600_000).default(60_000),
  /** How long an execute answers with its results (201) before it answers with its progress (202). */
  AI_EXECUTE_WAIT_MS: z.coerce.number().int().min(0).max(120_000).default(25_000),
  /** Scenario runs one integrator process executes at once. */
  INTEGRATOR_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
  /** Scenario runs one system may have going at once in one integrator process (the others wait their turn). */
  INTEGRATOR_TENANT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(8),
  /** Outgoing deliveries in flight from one integrator process at once… */
  DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(256),
  /** …for one system… */
  DELIVERY_TENANT_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(64),
  /** …and for one subscription: a slow receiver holds only these. */
  DELIVERY_SUBSCRIPTION_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(8),
  /** One delivery attempt's deadline: connect, send, and the receiver's answer. */
  DELIVERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** How long the delivery log keeps each attempt (and finished replays). */
  DELIVERY_LOG_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 365)
    .default(72),
  /**
   * The delays between a failed delivery's attempts, in ms, comma-separated (default: the published schedule
   * of about three days, integrator/deliveries/retry-schedule.ts). A shorter one is for tests and benchmarks.
   */
  DELIVERY_RETRY_DELAYS_MS: z
    .string()
    .regex(/^\d{1,10}(,\d{1,10}){0,49}$/, 'must be up to 50 delays in ms, comma-separated')
    .transform((list) => list.split(',').map(Number))
    .optional(),
  /**
   * How long an integrator holds the draining of a system's run backlog without renewing it: after a crash,
   * another integrator takes the backlog over after it.
   */
  INTEGRATOR_BACKLOG_LEASE_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  /** Processes that evaluate scenarios' expressions (apart from the platform: see infra/expressions). */
  EXPRESSION_PROCESSES: z.coerce.number().int().min(1).max(64).default(2),
  /** Expression processes one system's evaluations may hold at once (less than all: others get one). */
  EXPRESSION_TENANT_PROCESSES: z.coerce.number().int().min(1).max(64).default(1),
  /** The heap of one expression process: an expression that needs more fails its run. */
  EXPRESSION_MEMORY_MB: z.coerce.number().int().min(16).max(4096).default(128),
  /**
   * The longest one expression may run, built-in calls included: then its process is ended (JSONata's own
   * limit of 1 s ends most sooner; this one is for a built-in call that never returns, with room for a busy host).
   */
  EXPRESSION_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(3000),
  /** The consumer group of the integrator on the events topic. */
  INTEGRATOR_GROUP: z.string().min(1).default('integrator'),
  /** Where file contents go; unset: GridFS when the read store is MongoDB, else files under DATA_DIR/blobs. */
  BLOB_STORE: z.enum(['local', 'gridfs']).optional(),
  FILE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(2 ** 32)
    .default(25 * 1024 * 1024),
  /** Comma-separated media types an upload may declare (see contracts/files.ts for the default list). */
  FILE_CONTENT_TYPES: z
    .string()
    .transform((list) =>
      list
        .split(',')
        .map((type) => type.trim().toLowerCase())
        .filter((type) => type.length > 0),
    )
    .pipe(
      z.array(z.string().regex(/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/, 'must be type/subtype')).min(1),
    )
    .optional(),
});

export type Config = z.infer<typeof configSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable is an unset one (compose passes `${VAR:-}` through as "").
  const result = configSchema.safeParse(
    Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== '')),
  );
  if (!result.success) {
    const problems = result.error.issues
      .map((issue) => `  ${issue.path.join('.')}: ${issue.message}`)
      .join('\n');
    throw new Error(`invalid configuration:\n${problems}`);
  }
  const config = result.data;
  if (config.HTTP_HEADERS_TIMEOUT_MS > config.HTTP_REQUEST_TIMEOUT_MS)
    throw new Error('HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
  if (
    config.PUBLIC_URL !== undefined &&
    new URL(config.PUBLIC_URL).hostname !== config.BASE_HOST.toLowerCase()
  )
    throw new Error('PUBLIC_URL must be an address of BASE_HOST (its systems are subdomains of it)');
  if (config.EVENT_STORE === 'eventstoredb' && !config.ESDB_URL)
    throw new Error('EVENT_STORE=eventstoredb needs ESDB_URL');
  if (config.READ_STORE === 'mongodb' && !config.MONGO_URL)
    throw new Error('READ_STORE=mongodb needs MONGO_URL');
  if (config.STREAM === 'kafka' && !config.KAFKA_BROKERS) throw new Error('STREAM=kafka needs KAFKA_BROKERS');
  if (config.KMS_KEY_ID !== undefined && config.KMS_WRAPPED_KEY === undefined)
    throw new Error('KMS_KEY_ID needs KMS_WRAPPED_KEY: run npm run kms:new-key once and set what it prints');
  if (config.KMS_WRAPPED_KEY !== undefined && config.KMS_KEY_ID === undefined)
    throw new Error('KMS_WRAPPED_KEY needs KMS_KEY_ID, the KMS key that encrypted it');
  if (config.BLOB_STORE === 'gridfs' && !config.MONGO_URL)
    throw new Error('BLOB_STORE=gridfs needs MONGO_URL');
  return config;
}

let cachedVersion: string | undefined;

/** The deployed application version, for `X-Version`. */
export function appVersion(): string {
  if (cachedVersion === undefined) {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    cachedVersion = typeof manifest.version === 'string' ? manifest.version : '';
  }
  return cachedVersion;
}
