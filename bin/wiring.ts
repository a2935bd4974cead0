import { mkdirSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { newId } from '../contracts/ids';
import { createCommandRouter } from '../command-api/app';
import { ensureBootstrapAdmin } from '../command-api/identity/bootstrap';
import { AggregateCache, CommandHandler } from '../command-api/kit/handler';
import { IdAllocator } from '../command-api/kit/id-allocator';
import { IdempotencyKeys } from '../command-api/kit/idempotency';
import type { Config } from '../infra/config';
import type { UploadLimits } from '../command-api/deps';
import type { OutboundHttp } from '../infra/outbound/port';
import { appVersion } from '../infra/config';
import type { EventStore } from '../infra/event-store/port';
import { createHttpApp, type ReadinessReport } from '../infra/http/app';
import { tokenAuthenticator } from '../infra/http/authenticate';
import { SessionActivity } from '../infra/http/session-activity';
import { createSealer, loadMasterKey } from '../infra/secrets/sealer';
import { createAccessTokens } from '../infra/secrets/access-tokens';
import { OAUTH_AUTHORIZE_ROUTE, OAUTH_CLIENT_ROUTES } from '../command-api/oauth/routes/oauth';
import { SOCIAL_FORM_POST_CALLBACKS, SOCIAL_LOGIN_ROUTES } from '../command-api/identity/routes/social-login';
import { ApiMeter } from '../infra/http/metering';
import type { Logger } from '../infra/logging';
import { Metrics } from '../infra/metrics';
import type { ReadStore } from '../infra/read-store/port';
import { ReadModels } from '../infra/read-store/read-models';
import { createSqliteReadStore } from '../infra/read-store/sqlite';
import { pooledReadStore, SqliteReadPool, type ReadThreadData } from '../infra/read-store/sqlite-read-pool';
import { startTypeScriptWorker } from '../infra/worker-thread';
import { ExpressionPool } from '../infra/expressions/pool';
import { EXPRESSION_MAX_INPUT_BYTES, EXPRESSION_MAX_RESULT_CHARS } from '../languages/mapping/mapping';
import { createInProcessStream, type InProcessStreamHandle } from '../infra/stream/in-process';
import type { Stream } from '../infra/stream/port';
import { ProjectionHost, type Projections } from '../projections/host';
import { ThreadedProjections } from '../projections/threaded-host';
import { READ_MODEL_PROJECTIONS } from '../projections/read-models/catalogue';
import { ThreadedWindowDecoder } from '../projections/threaded-decoder';
import type { DecoderThreadData } from '../projections/thread-protocol';
import type { WindowDecoder } from '../projections/window-decoder';
import { embeddedFile, openSqliteEventStore } from './embedded-stores';
import { credentialHeads, type CredentialHeads } from './credential-heads';
import {
  eventStoreDbAdapter,
  mongoAttemptLogAdapter,
  kafkaStreamAdapter,
  gridFsBlobStoreAdapter,
  mongoReadStoreAdapter,
} from './production-adapters';
import { Relay } from '../projections/relay';
import { activeVersionOf } from '../projections/versions';
import { checkpointName } from '../contracts/read-models';
import { guardedHttp } from '../infra/outbound/guarded-http';
import { createLocalBlobStore } from '../infra/blob-store/local-files';
import type { AttemptLog } from '../infra/attempts/port';
import { createSqliteAttemptLog } from '../infra/attempts/sqlite';
import type { BlobStore } from '../infra/blob-store/port';
import { DEFAULT_FILE_CONTENT_TYPES } from '../contracts/files';
import { FILE_UPLOAD_ROUTE } from '../command-api/records/service';
import { FIELD_GENERATE_ROUTE } from '../command-api/ai/routes/ai-generation';
import { SYSTEM_AI_ROUTE } from '../command-api/ai/routes/system-ai';
import { DEAD_LETTER_ROUTE } from '../command-api/systems/routes/dead-letters';
import { DeadLetters } from '../projections/dead-letters';
import { readModelCommandReads } from '../infra/read-store/command-reads';
import { apiDocsRouter, createQueryRouter, oauthMetadataRouter } from '../query-api/app';
import { API_BASE } from '../infra/http/operations';
import { loadApiDescriptions } from './api-descriptions';
import { OPERATIONS } from '../contracts/api/index';
import {
  awaitCredentialHeads,
  awaitPosition,
  CREDENTIAL_PROJECTIONS,
  type ReadConsistency,
} from '../query-api/consistency';
import type { Express } from 'express';
import { HookResponses } from '../command-api/hooks/responses';
import { createHookIntake, type OpenHook } from '../command-api/hooks/intake';
import { createHookReceiver } from '../command-api/hooks/http-receiver';
import { createMailReceiver } from '../command-api/hooks/mail-receiver';
import { VECTOR_PROJECTION } from '../projections/vectors/vector-projection';
import { startSemanticSearch } from './semantic';
import type { MailHandlers } from '../infra/smtp/mail-listener';
import { Integrator } from '../integrator/consumer';
import { ScenarioRunner, type RunnerDeps } from '../integrator/runner';
import { IntegratorScheduler } from '../integrator/scheduler';
import { QueueWorker } from '../integrator/queue-worker';
import { createOpenAiLanguageModel } from '../infra/ai/language-model/openai';
import { SystemModels } from '../command-api/ai/system-models';
import { exponentialBackoff, MeteredModel } from '../command-api/ai/metered-model';
import { AiJobs } from '../command-api/ai/jobs';
import { AiSlots } from '../command-api/ai/ai-slots';
import { FairSlots } from '../infra/fair-slots';

/**
 * Remembers the highest position this process appended, for read-your-writes without a header, tells
 * `onAppend` (the projections thread) about each append, and `heads` about each append before it is answered.
 */
export function trackWrites(
  store: EventStore,
  onAppend: () => void,
  heads?: Pick<CredentialHeads, 'appended'>,
): { store: EventStore; lastPosition: () => bigint } {
  let last = 0n;
  const tracked: EventStore = Object.create(store) as EventStore;
  tracked.append = async (streamId, events, options) => {
    const result = await store.append(streamId, events, options);
    if (result.position > last) last = result.position;
    onAppend();
    await heads?.appended(streamId, result.position);
    return result;
  };
  tracked.appendToStreams = async (appends) => {
    const outcomes = await store.appendToStreams(appends);
    for (const outcome of outcomes)
      if (outcome.ok && outcome.result.position > last) last = outcome.result.position;
    onAppend();
    for (const [index, outcome] of outcomes.entries())
      if (outcome.ok) await heads?.appended(appends[index]!.streamId, outcome.result.position);
    return outcomes;
  };
  return { store: tracked, lastPosition: () => last };
}

export interface Adapters {
  readonly events: EventStore;
  readonly readStore: ReadStore;
  readonly blobs: BlobStore;
  readonly stream: () => Promise<Stream>;
  /** Tells the event store that another thread appended (embedded store only; EventStoreDB pushes). */
  readonly wakeEvents: () => void;
  /** Tells the stream's consumers that another thread published to `topic` (embedded stream only). */
  readonly wakeStream: (topic: string) => void;
  close(): Promise<void>;
}

export async function openAdapters(config: Config, logger: Logger): Promise<Adapters> {
  const dataDir = resolve(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  const sqliteEvents = config.EVENT_STORE === 'sqlite' ? openSqliteEventStore(config) : undefined;
  const events =
    sqliteEvents ??
    eventStoreDbAdapter().createEventStoreDbEventStore({
      connectionString: config.ESDB_URL!,
    });
  const readStore =
    config.READ_STORE === 'mongodb'
      ? await mongoReadStoreAdapter().createMongoReadStore({
          url: config.MONGO_URL!,
          database: config.MONGO_DATABASE,
          queryBudgetMs: config.QUERY_BUDGET_MS,
        })
      : await createSqliteReadStore({ path: embeddedFile(config, 'readModels'), groupCommit: true });
  const blobs =
    (config.BLOB_STORE ?? (config.READ_STORE === 'mongodb' ? 'gridfs' : 'local')) === 'gridfs'
      ? await gridFsBlobStoreAdapter().createGridFsBlobStore({
          url: config.MONGO_URL!,
          database: config.MONGO_DATABASE,
          queryBudgetMs: config.QUERY_BUDGET_MS,
        })
      : createLocalBlobStore(join(dataDir, 'blobs'));
  let stream: Stream | undefined;
  let embeddedStream: InProcessStreamHandle | undefined;
  const streamLogger = logger.child({ component: 'stream' });
  return {
    events,
    readStore,
    blobs,
    wakeEvents: () => sqliteEvents?.notifyExternalAppend(),
    wakeStream: (topic) => embeddedStream?.notifyExternalPublish(topic),
    stream: async () =>
      (stream ??=
        config.STREAM === 'kafka'
          ? kafkaStreamAdapter().createKafkaStream({
              brokers: config.KAFKA_BROKERS!.split(',').map((broker) => broker.trim()),
              clientId: 'records-platform',
              maxBatchBytes: config.KAFKA_MAX_BATCH_BYTES,
              logger: streamLogger,
            })
          : (embeddedStream = createInProcessStream({
              path: embeddedFile(config, 'stream'),
              logger: streamLogger,
            }))),
    async close() {
      await stream?.close();
      await blobs.close();
      await readStore.close();
      await events.close();
    },
  };
}

/**
 * The sign-in attempt log, where the read store is: a SQLite file under DATA_DIR, which the processes of one
 * host share, or a collection beside the MongoDB read models, which every replica shares.
 */
export async function openAttemptLog(config: Config): Promise<AttemptLog> {
  return config.READ_STORE === 'mongodb'
    ? mongoAttemptLogAdapter().createMongoAttemptLog({
        url: config.MONGO_URL!,
        database: config.MONGO_DATABASE,
        queryBudgetMs: config.QUERY_BUDGET_MS,
      })
    : createSqliteAttemptLog({ path: embeddedFile(config, 'attempts') });
}

function quotaConfigured(config: Config): boolean {
  return config.QUOTA_CALLS_PER_MINUTE !== undefined || config.TENANT_QUOTAS !== undefined;
}

/** What a file given to a record may be (an upload, or a file a scenario attaches). */
function uploadLimits(config: Config): UploadLimits {
  return {
    maxBytes: config.FILE_MAX_BYTES,
    contentTypes: new Set(config.FILE_CONTENT_TYPES ?? DEFAULT_FILE_CONTENT_TYPES),
  };
}

/** Calls to addresses users configure (buttons, HTTP request steps), through the SSRF guard. */
function outboundOf(config: Config): OutboundHttp {
  return guardedHttp({
    allowNonPublic: config.OUTBOUND_ALLOW_PRIVATE,
    timeoutMs: config.OUTBOUND_TIMEOUT_MS,
  });
}

/** The deployment's model for the AI features, when one is configured (AI_URL). */
function deploymentModelOf(config: Config) {
  if (config.AI_URL === undefined) return null;
  return { baseUrl: config.AI_URL, model: config.AI_MODEL, timeoutMs: config.AI_TIMEOUT_MS };
}

/** How often a command-api process deletes expired sign-in attempts. */
const ATTEMPT_SWEEP_MS = 60_000;

export interface Services {
  readonly app: Express;
  readonly host?: Projections;
  readonly relay?: Relay;
  readonly integrator?: Integrator;
  /** The integrator's time-driven rules (tests call them with an instant of their choosing). */
  readonly integratorScheduler?: IntegratorScheduler;
  readonly meter: ApiMeter;
  readonly generatedToken?: string;
  /** Where the SMTP listener hands mailhook email (where this process receives it). */
  readonly mail?: MailHandlers<OpenHook>;
  /**
   * The first step of a stop: webhook requests waiting for their run's response are answered `Accepted` (the
   * run goes on), so that the HTTP server can drain at once.
   */
  releaseWaiting(): Promise<void>;
  stop(): Promise<void>;
}

export interface ServiceSelection {
  readonly command: boolean;
  readonly query: boolean;
  readonly projections: boolean;
  readonly relay: boolean;
  /** Scenario runs from the stream (and the integrator's time-driven rules). */
  readonly integrator: boolean;
}

/** Every service: the one-process platform. */
export const EVERYTHING: ServiceSelection = {
  command: true,
  query: true,
  projections: true,
  relay: true,
  integrator: true,
};

/** Where hook addresses point: HOOK_BASE_URL, or this platform's own receiver. */
export function hookBaseUrl(config: Config): string {
  return (config.HOOK_BASE_URL ?? `http://${config.BASE_HOST}:${config.PORT}/hook`).replace(/\/+$/, '');
}

/** The domain of mailhook addresses: MAIL_DOMAIN, or the platform's host name. */
export function mailDomain(config: Config): string {
  return (config.MAIL_DOMAIN ?? config.BASE_HOST).toLowerCase();
}

/**
 * Builds the chosen services on one set of adapters. One-process mode selects everything; `bin/service`
 * selects one. The bootstrap admin is ensured by whichever process runs the command API.
 */
export async function buildServices(
  config: Config,
  logger: Logger,
  adapters: Adapters,
  selection: ServiceSelection,
): Promise<Services> {
  // Read at scrape time, once the integrator (made below) runs.
  const integratorProgress = async () => {
    if (!integration) return undefined;
    const { integrator } = integration;
    const head = await adapters.events.headPosition();
    const seen = integrator.position;
    return {
      lagPositions: seen > head ? 0 : Number(head - seen),
      runsStarted: integrator.runsStarted,
      runsParked: integrator.backlog.parked,
      backlogsDraining: integrator.backlog.draining,
    };
  };
  // Model calls of AI jobs: fair between systems, bounded per system and per process.
  const aiSlots = new AiSlots(
    config.AI_MAX_CONCURRENCY,
    config.AI_TENANT_CONCURRENCY,
    config.AI_CREDENTIAL_CONCURRENCY,
  );
  const deadLetters = new DeadLetters({
    events: adapters.events,
    readStore: adapters.readStore,
    projections: READ_MODEL_PROJECTIONS,
  });
  const metrics = new Metrics(
    async () => {
      if (!host) return [];
      const head = await adapters.events.headPosition();
      const vectors = semantic?.position();
      return [
        ...host.status().map((status) => ({
          projection: status.name,
          version: status.version,
          lagPositions: Number(head - status.position),
          caughtUp: status.caughtUp,
        })),
        ...(vectors === undefined
          ? []
          : [
              {
                projection: VECTOR_PROJECTION,
                version: 1,
                lagPositions: Number(head > vectors ? head - vectors : 0n),
                caughtUp: vectors >= head,
              },
            ]),
      ];
    },
    integratorProgress,
    () => aiSlots.inUse,
    // Where the projections run (the dead letters are in the read store: shared by every process).
    () => (host ? deadLetters.countsByProjection() : Promise.resolve(new Map())),
  );
  const threaded =
    selection.projections && config.PROJECTIONS_THREAD
      ? new ThreadedProjections(
          PROJECTIONS_THREAD_ENTRY,
          { config, relay: selection.relay && config.RELAY } satisfies ProjectionsThreadData,
          (projection, lagMs) => metrics.observeVisibleLag(projection, lagMs),
          (topic) => adapters.wakeStream(topic),
        )
      : undefined;
  const host: Projections | undefined =
    threaded ??
    (selection.projections
      ? new ProjectionHost(READ_MODEL_PROJECTIONS, {
          events: adapters.events,
          readStore: adapters.readStore,
          logger: logger.child({ component: 'projections' }),
          onVisible: (projection, lagMs) => metrics.observeVisibleLag(projection, lagMs),
        })
      : undefined);
  const heads = credentialHeads(
    adapters.events,
    adapters.readStore,
    READ_MODEL_PROJECTIONS.filter((projection) => CREDENTIAL_PROJECTIONS.includes(projection.name)),
  );
  const { store: events, lastPosition } = trackWrites(
    adapters.events,
    () => threaded?.notifyAppended(),
    heads,
  );
  const readPool = selection.query ? await startReadPool(config, logger) : undefined;
  const readModels = new ReadModels(
    readPool ? pooledReadStore(adapters.readStore, readPool) : adapters.readStore,
  );
  await host?.start();
  // Semantic search where records are searched (query) or their vectors made (projections).
  const semantic =
    config.SEMANTIC_SEARCH && (selection.query || selection.projections)
      ? await startSemanticSearch(config, logger, {
          events: adapters.events,
          readModels,
          ...(host &&
            selection.projections && {
              waitForReadModels: (position: bigint) =>
                host.waitFor(position, 60_000, ['records', 'fields', 'labels']),
            }),
        })
      : undefined;
  const relay =
    selection.relay && config.RELAY && !threaded ? await startRelay(config, adapters, logger) : undefined;

  const handler = new CommandHandler(events, new AggregateCache());
  const ids = new IdAllocator(events);
  const idempotency = new IdempotencyKeys(events);
  const hooks = { baseUrl: hookBaseUrl(config), mailDomain: mailDomain(config), now: () => new Date() };
  const integration = selection.integrator
    ? await startIntegrator(config, adapters, logger, { handler, ids, idempotency }, readModels)
    : undefined;
  let generatedToken: string | undefined;
  if (selection.command) {
    ({ generatedToken } = await ensureBootstrapAdmin(handler, ids, {
      tenant: config.DEFAULT_TENANT,
      email: config.ADMIN_EMAIL,
      ...(config.ADMIN_PASSWORD !== undefined && { password: config.ADMIN_PASSWORD }),
      ...(config.ADMIN_TOKEN !== undefined && { token: config.ADMIN_TOKEN }),
    }));
    if (host) await host.waitFor(lastPosition(), 30_000, ['identity']);
  }

  const readModelsAt: ReadConsistency['waitFor'] = host
    ? (position, names, timeoutMs) =>
        // Answered at once (no trip through the projections host) when they are there already.
        names.every((name) => host.positionOf(name) >= position)
          ? Promise.resolve(true)
          : host.waitFor(position, timeoutMs, names)
    : (position, names, timeoutMs) => waitForCheckpoints(adapters.readStore, position, names, timeoutMs);
  const consistency: ReadConsistency = {
    timeoutMs: config.MIN_POSITION_TIMEOUT_MS,
    defaultMinPosition: host ? lastPosition : () => 0n,
    headOf: heads.headOf,
    // The vector index is no read model of the host: its projection answers for it.
    waitFor: async (position, names, timeoutMs) => {
      const others = names.filter((name) => name !== VECTOR_PROJECTION);
      const [readModelsThere, vectorsThere] = await Promise.all([
        others.length === 0 ? true : readModelsAt(position, others, timeoutMs),
        names.includes(VECTOR_PROJECTION) && semantic ? semantic.waitFor(position, timeoutMs) : true,
      ]);
      return readModelsThere && vectorsThere;
    },
  };
  const awaitCredentialWrites = (): Promise<void> =>
    awaitCredentialHeads(consistency, CREDENTIAL_PROJECTIONS);
  // Shared by every process of the deployment: sign-in and client-authentication attempts, introspections
  // (command API), and each tenant's API call quota (both APIs).
  // The integrator takes mailhook email: where it runs, so does the SMTP listener (unless switched off).
  const receivesMail = selection.integrator && config.SMTP_ENABLED;
  const sharedLog =
    selection.command || receivesMail || (selection.query && quotaConfigured(config))
      ? await openAttemptLog(config)
      : undefined;
  const attempts = selection.command ? sharedLog : undefined;
  const hookResponses = attempts && new HookResponses(events, logger.child({ component: 'hook-receiver' }));
  await hookResponses?.start();
  const intake =
    sharedLog &&
    (selection.command || receivesMail) &&
    createHookIntake({
      handler,
      attempts: sharedLog,
      blobs: adapters.blobs,
      ...(hookResponses && { responses: hookResponses }),
      logger: logger.child({ component: 'hook-receiver' }),
      operatorTenant: config.DEFAULT_TENANT,
      now: hooks.now,
    });
  const hookReceiver =
    intake &&
    selection.command &&
    createHookReceiver({
      intake,
      logger: logger.child({ component: 'hook-receiver' }),
      trustedProxies: config.HOOK_TRUSTED_PROXIES,
    });
  const mailReceiver =
    intake &&
    receivesMail &&
    createMailReceiver({
      intake,
      mailDomain: hooks.mailDomain,
      logger: logger.child({ component: 'mail-receiver' }),
    });
  const meter = new ApiMeter({
    store: adapters.readStore,
    ...(sharedLog && { shared: sharedLog }),
    ...(config.QUOTA_CALLS_PER_MINUTE !== undefined && { quotaPerMinute: config.QUOTA_CALLS_PER_MINUTE }),
    ...(config.TENANT_QUOTAS !== undefined && { tenantQuotas: config.TENANT_QUOTAS }),
  });
  const meterTimer = setInterval(() => {
    meter.flush().catch((error: unknown) => logger.warn({ err: error }, 'flushing API usage failed'));
  }, 5000);
  meterTimer.unref();
  const sweepTimer =
    attempts &&
    setInterval(() => {
      attempts
        .sweep(Date.now())
        .catch((error: unknown) => logger.warn({ err: error }, 'deleting expired sign-in attempts failed'));
    }, ATTEMPT_SWEEP_MS);
  sweepTimer?.unref();

  const readiness = async (): Promise<ReadinessReport> => {
    const statuses = host?.status() ?? [];
    const ready = statuses.every((status) => status.caughtUp && status.error === undefined);
    return {
      ready,
      checks: Object.fromEntries(
        statuses.map((status) => [
          status.name,
          {
            version: status.version,
            position: status.position.toString(),
            caughtUp: status.caughtUp,
            ...(status.error && { error: status.error }),
          },
        ]),
      ),
    };
  };

  const commandReads = readModelCommandReads(
    readModels,
    (projections) => awaitPosition(consistency, consistency.defaultMinPosition(), projections),
    awaitCredentialWrites,
    async (projections) => awaitPosition(consistency, await adapters.events.headPosition(), projections),
  );
  const sealer = createSealer(loadMasterKey(config.SECRETS_KEY, resolve(config.DATA_DIR)));
  const deploymentModel = deploymentModelOf(config);
  const systemModels = new SystemModels({
    aggregates: handler,
    operatorTenant: config.DEFAULT_TENANT,
    sealer,
    deployment:
      deploymentModel &&
      createOpenAiLanguageModel({ ...deploymentModel, apiKey: config.AI_API_KEY ?? 'none' }),
    defaultTimeoutMs: config.AI_TIMEOUT_MS,
    create: createOpenAiLanguageModel,
  });
  const meteredModel = new MeteredModel({
    handler,
    modelFor: (tenant) => systemModels.modelFor(tenant),
    now: hooks.now,
    // Long enough for a call and its retries; a call that never settles (the process died) then lapses.
    reservationHoldMs: config.AI_TIMEOUT_MS * 6 + 60_000,
    callTimeoutMs: config.AI_TIMEOUT_MS,
    backoffMs: exponentialBackoff,
    observe: (outcome, tokens) => metrics.observeAiCall(outcome, tokens),
    onExcessUsage: (excess) =>
      logger.warn(
        excess,
        'a language model reported more tokens than its call reserved; charged what was reserved',
      ),
  });
  const aiJobs = new AiJobs({
    handler,
    ids,
    idempotency,
    model: meteredModel,
    slots: aiSlots,
    reads: commandReads,
    now: hooks.now,
    logger: logger.child({ component: 'ai-jobs' }),
    concurrency: config.AI_CONCURRENCY,
    leaseMs: config.AI_JOB_LEASE_MS,
  });
  const sessionIdleMs = config.SESSION_IDLE_MINUTES * 60_000;
  const accessTokens = createAccessTokens(sealer.derivedKey('oauth-access-tokens'));
  // The MCP tools call both APIs: served where both run, or where MCP_API_URL names the API to call.
  const servesMcp = (selection.command && selection.query) || config.MCP_API_URL !== undefined;
  const app = createHttpApp({
    ...(servesMcp && {
      mcp: {
        operations: OPERATIONS,
        ...(config.MCP_API_URL !== undefined && { apiUrl: config.MCP_API_URL }),
        timeoutMs: config.OUTBOUND_TIMEOUT_MS,
        sessionLimits: {
          perCredential: config.MCP_SESSIONS_PER_CREDENTIAL,
          perUser: config.MCP_SESSIONS_PER_USER,
          perSystem: config.MCP_SESSIONS_PER_SYSTEM,
          total: config.MCP_MAX_SESSIONS,
        },
        idleSessionMs: config.MCP_SESSION_IDLE_SECONDS * 1000,
      },
    }),
    version: appVersion(),
    baseHost: config.BASE_HOST,
    defaultTenant: config.DEFAULT_TENANT,
    ...(config.PUBLIC_URL !== undefined && { publicUrl: config.PUBLIC_URL }),
    bodyLimit: config.BODY_LIMIT,
    trustProxyHops: config.TRUST_PROXY_HOPS,
    logger,
    authenticate: tokenAuthenticator(readModels, {
      // Positions only grow, so their sum changes whenever either projection moves: the cache's stamp.
      identityPosition: host
        ? () => host.positionOf('identity') + host.positionOf('oauth')
        : async () =>
            (await checkpointOf(adapters.readStore, 'identity')) +
            (await checkpointOf(adapters.readStore, 'oauth')),
      accessTokens,
      sessions: {
        idleMs: sessionIdleMs,
        activity: new SessionActivity(adapters.readStore, 60_000, (error) =>
          logger.warn({ err: error }, 'recording session activity failed'),
        ),
      },
      awaitCredentialWrites,
    }),
    meter,
    readiness,
    metrics: () => metrics.render(),
    ...(config.METRICS_TOKEN !== undefined && { metricsToken: config.METRICS_TOKEN }),
    ...(hookReceiver && { hooks: hookReceiver.router }),
    ...(config.HOOK_BASE_URL !== undefined && { hookHost: new URL(config.HOOK_BASE_URL).hostname }),
    ...(attempts && {
      uploadRoutes: [FILE_UPLOAD_ROUTE],
      oauthRoutes: OAUTH_CLIENT_ROUTES,
      commandGets: [
        OAUTH_AUTHORIZE_ROUTE,
        SOCIAL_LOGIN_ROUTES,
        FIELD_GENERATE_ROUTE,
        SYSTEM_AI_ROUTE,
        DEAD_LETTER_ROUTE,
      ],
      sessionForms: [OAUTH_AUTHORIZE_ROUTE],
      formPostCallbacks: [SOCIAL_FORM_POST_CALLBACKS],
      command: createCommandRouter({
        handler,
        ids,
        idempotency,
        hooks: { ...hooks, ...(hookReceiver && { deliverJson: hookReceiver.deliverJson }) },
        newCommandId: newId,
        outbound: outboundOf(config),
        blobs: adapters.blobs,
        uploads: uploadLimits(config),
        logger: logger.child({ component: 'command-api' }),
        operatorTenant: config.DEFAULT_TENANT,
        deadLetters,
        sealer,
        accessTokens,
        socialLogin: config.SOCIAL_LOGIN ?? {},
        attempts,
        introspectionsPerMinute: config.OAUTH_INTROSPECTIONS_PER_MINUTE,
        ai: {
          model: meteredModel,
          jobs: aiJobs,
          slots: aiSlots,
          slotWaitMs: config.AI_TIMEOUT_MS,
          executeWaitMs: config.AI_EXECUTE_WAIT_MS,
          systems: systemModels,
          deployment: deploymentModel,
        },
        sessions: { idleMs: sessionIdleMs, maxAgeMs: config.SESSION_MAX_HOURS * 3_600_000 },
        reads: commandReads,
      }),
    }),
    ...(selection.query && {
      wellKnown: oauthMetadataRouter(),
      pages: apiDocsRouter(API_BASE),
      query: createQueryRouter({
        descriptions: loadApiDescriptions(),
        readModels,
        consistency,
        blobs: adapters.blobs,
        hookPublication: hooks,
        ...(semantic && { semantic: semantic.search }),
        logger: logger.child({ component: 'query-api' }),
        credentialActivity: (tenant, credentials) => meter.activity(tenant, credentials),
        accessTokens,
      }),
    }),
  });

  // Jobs a stopped process left: resumed here once their lease has run out.
  if (selection.command) aiJobs.startResuming(Object.values(selection).every((selected) => selected));
  return {
    app,
    ...(host && { host }),
    ...(relay && { relay }),
    ...(integration && { integrator: integration.integrator, integratorScheduler: integration.scheduler }),
    meter,
    ...(generatedToken !== undefined && { generatedToken }),
    ...(mailReceiver && { mail: mailReceiver }),
    async releaseWaiting() {
      await hookResponses?.stop();
    },
    async stop() {
      clearInterval(meterTimer);
      clearInterval(sweepTimer);
      await meter.flush().catch(() => undefined);
      await aiJobs.stop();
      await integration?.scheduler.stop();
      await integration?.integrator.stop();
      await integration?.expressions.close();
      await hookResponses?.stop();
      await sharedLog?.close();
      await relay?.stop();
      await semantic?.stop();
      await host?.stop();
      await readPool?.close();
    },
  };
}

/**
 * The worker-thread side of `ThreadedProjections`: a `.ts` source when the platform runs from sources (tsx), the
 * compiled `.js` beside this file in a build.
 */
export const PROJECTIONS_THREAD_ENTRY = join(__dirname, `projections-thread${extname(__filename)}`);

export interface ProjectionsThreadData {
  readonly config: Config;
  readonly relay: boolean;
}

/** The worker-thread side of `SqliteReadPool`. */
export const READ_THREAD_ENTRY = join(__dirname, `read-thread${extname(__filename)}`);

/** The pool of read threads for the query API on the embedded read store (MongoDB bounds reads itself). */
async function startReadPool(config: Config, logger: Logger): Promise<SqliteReadPool | undefined> {
  if (config.READ_STORE !== 'sqlite') return undefined;
  const data: ReadThreadData = { path: embeddedFile(config, 'readModels') };
  const poolLogger = logger.child({ component: 'read-pool' });
  return SqliteReadPool.start({
    size: config.READ_THREADS,
    budgetMs: config.QUERY_BUDGET_MS,
    queuePerLane: config.READ_QUEUE_PER_SYSTEM,
    startWorker: () => startTypeScriptWorker(READ_THREAD_ENTRY, data),
    onThreadExit: (code) => poolLogger.error({ code }, 'a read thread stopped; started another'),
  });
}

/** The worker-thread side of `ThreadedWindowDecoder`. */
export const DECODER_THREAD_ENTRY = join(__dirname, `decoder-thread${extname(__filename)}`);

/**
 * Decoder threads for a rebuild of `projection` into `version`, or none where the log cannot be split into
 * windows (EventStoreDB) or only one core would do the work.
 */
export async function startRebuildDecoders(
  config: Config,
  projection: string,
  version: number,
): Promise<WindowDecoder[]> {
  if (config.EVENT_STORE !== 'sqlite' || config.REBUILD_THREADS === 0) return [];
  const data: DecoderThreadData = { config, projection, version };
  const started = await Promise.allSettled(
    Array.from({ length: config.REBUILD_THREADS }, () =>
      ThreadedWindowDecoder.start(DECODER_THREAD_ENTRY, data),
    ),
  );
  const decoders = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = started.find((result) => result.status === 'rejected');
  if (failure) {
    // One thread failed to start: stop the others rather than leave them running.
    await Promise.all(decoders.map((decoder) => decoder.close()));
    throw failure.reason;
  }
  return decoders;
}

/** The integrator: scenario runs from the events topic, as a member of its consumer group. */
async function startIntegrator(
  config: Config,
  adapters: Adapters,
  logger: Logger,
  commands: Pick<RunnerDeps, 'handler' | 'ids' | 'idempotency'>,
  readModels: ReadModels,
): Promise<{ integrator: Integrator; scheduler: IntegratorScheduler; expressions: ExpressionPool }> {
  const integratorLogger = logger.child({ component: 'integrator' });
  const now = () => new Date();
  const expressions = new ExpressionPool({
    entry: EXPRESSION_PROCESS_ENTRY,
    size: config.EXPRESSION_PROCESSES,
    perTenant: config.EXPRESSION_TENANT_PROCESSES,
    memoryMb: config.EXPRESSION_MEMORY_MB,
    timeoutMs: config.EXPRESSION_TIMEOUT_MS,
    maxResultBytes: EXPRESSION_MAX_RESULT_CHARS,
    maxInputBytes: EXPRESSION_MAX_INPUT_BYTES,
    logger: integratorLogger.child({ component: 'expressions' }),
  });
  const runner = new ScenarioRunner({
    expressions,
    slots: new FairSlots(config.INTEGRATOR_CONCURRENCY, config.INTEGRATOR_TENANT_CONCURRENCY),
    ...commands,
    blobs: adapters.blobs,
    logger: integratorLogger,
    now,
    readModels,
    uploads: uploadLimits(config),
    outbound: outboundOf(config),
  });
  const queues = new QueueWorker({
    handler: commands.handler,
    readModels,
    runner,
    logger: integratorLogger,
    now,
  });
  const integrator = new Integrator({
    stream: await adapters.stream(),
    runner,
    queues,
    logger: integratorLogger,
    topic: config.EVENTS_TOPIC,
    group: config.INTEGRATOR_GROUP,
    // Messages in hand at once: more than the runs that may go at once (the runner's fair slots), so the runs
    // of busy systems that wait for their system's share do not keep another system's messages from being
    // taken. (The stream reads ahead 16 times this many messages.)
    concurrency: Math.min(1000, config.INTEGRATOR_CONCURRENCY * 4),
    // A system holds twice its share of the runner in hand; beyond that its requests wait in its run backlog.
    tenantInHand: 2 * config.INTEGRATOR_TENANT_CONCURRENCY,
    events: adapters.events,
    backlog: {
      handler: commands.handler,
      readModels,
      logger: integratorLogger.child({ component: 'run-backlog' }),
      now,
      holder: `${hostname()}:${process.pid}:${randomUUID()}`,
      leaseMs: config.INTEGRATOR_BACKLOG_LEASE_MS,
      window: 2 * config.INTEGRATOR_TENANT_CONCURRENCY,
    },
  });
  await integrator.start();
  const scheduler = new IntegratorScheduler({
    handler: commands.handler,
    events: adapters.events,
    readModels,
    logger: integratorLogger,
    now,
    logRetentionMs: config.HOOK_LOG_RETENTION_HOURS * 3_600_000,
    intervalMs: 60_000,
    queues,
    dueCheckMs: 5_000,
    backlogs: integrator.backlog,
  });
  scheduler.start();
  return { integrator, scheduler, expressions };
}

/** The expression processes' entry (see `ExpressionPool`). */
export const EXPRESSION_PROCESS_ENTRY = join(__dirname, `expression-process${extname(__filename)}`);

export async function startRelay(
  config: Config,
  adapters: Adapters,
  logger: Logger,
  onPublished?: (topic: string) => void,
): Promise<Relay> {
  const relay = new Relay(
    {
      events: adapters.events,
      readStore: adapters.readStore,
      stream: await adapters.stream(),
      logger: logger.child({ component: 'relay' }),
      ...(onPublished && { onPublished }),
    },
    config.EVENTS_TOPIC,
  );
  await relay.start();
  return relay;
}

async function checkpointOf(readStore: ReadStore, projection: string): Promise<bigint> {
  const value = await readStore.getCheckpoint(
    checkpointName(projection, await activeVersionOf(readStore, projection)),
  );
  return value === null ? 0n : BigInt(value);
}

/** Read-your-writes for a query API running apart from the projections: poll their checkpoints. */
/** Whether the named read models' stored checkpoints reach `position` within `timeoutMs` (polled). */
export async function waitForCheckpoints(
  readStore: ReadStore,
  position: bigint,
  names: readonly string[],
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let reached = true;
    for (const name of names) if ((await checkpointOf(readStore, name)) < position) reached = false;
    if (reached) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
