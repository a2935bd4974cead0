import { resolve } from 'node:path';
import { DEFAULT_FILE_CONTENT_TYPES } from '../contracts/files';
import type { HookPublication } from '../contracts/integrator';
import type { UploadLimits } from '../command-api/deps';
import { AggregateCache, CommandHandler } from '../command-api/kit/handler';
import { IdAllocator } from '../command-api/kit/id-allocator';
import { IdempotencyKeys } from '../command-api/kit/idempotency';
import type { AttemptLog } from '../infra/attempts/port';
import type { DeliveryStore } from '../infra/deliveries/port';
import type { Config } from '../infra/config';
import { ApiMeter } from '../infra/http/metering';
import type { Logger } from '../infra/logging';
import { guardedHttp } from '../infra/outbound/guarded-http';
import type { OutboundHttp } from '../infra/outbound/port';
import { Metrics, type IntegratorProgress, type ProjectionLag } from '../infra/metrics';
import { ReadModels } from '../infra/read-store/read-models';
import { pooledReadStore } from '../infra/read-store/sqlite-read-pool';
import { createAccessTokens, type AccessTokens } from '../infra/secrets/access-tokens';
import { createSealer, loadMasterKey, type Sealer } from '../infra/secrets/sealer';
import { DeadLetters } from '../projections/dead-letters';
import { READ_MODEL_PROJECTIONS } from '../projections/read-models/catalogue';
import { CREDENTIAL_PROJECTIONS } from '../query-api/consistency';
import { openAttemptLog, openDeliveryStore, type Adapters } from './adapters';
import { credentialHeads, recordCredentialHeads, type CredentialHeads } from './credential-heads';
import { startReadPool } from './threads';

/** What `/metrics` reads from one service at scrape time. */
export interface MetricSources {
  /** The lag of the projections it runs, against the store's head. */
  projectionLag?(head: bigint): readonly ProjectionLag[];
  /** Events its projections went past as dead letters, still unresolved. */
  deadLetters?(): Promise<ReadonlyMap<string, number>>;
  integrator?(): Promise<IntegratorProgress>;
  /** Model calls of AI jobs under way. */
  aiCallsInFlight?(): number;
}

/** Where the hooks of this platform are published (their addresses), and the clock of their rules. */
export interface HookAddresses extends HookPublication {
  readonly now: () => Date;
}

/** What every service of a process shares, built once on the process's adapters. */
export interface Kernel {
  readonly config: Config;
  readonly logger: Logger;
  readonly adapters: Adapters;
  readonly handler: CommandHandler;
  readonly ids: IdAllocator;
  readonly idempotency: IdempotencyKeys;
  /** The read models: through the query API's read threads where it runs on the embedded store. */
  readonly readModels: ReadModels;
  readonly credentialHeads: CredentialHeads;
  /** The highest position this process appended: read-your-writes without a header. */
  lastPosition(): bigint;
  readonly deadLetters: DeadLetters;
  readonly metrics: Metrics;
  /** API calls per system and credential: usage, activity and quotas. */
  readonly meter: ApiMeter;
  readonly sealer: Sealer;
  readonly accessTokens: AccessTokens;
  readonly hookAddresses: HookAddresses;
  /**
   * The log every process of the deployment shares: sign-in and client-authentication attempts,
   * introspections, the hook intake's, API call quotas. Opened where a service of this process uses it.
   */
  attempts(): AttemptLog;
  /**
   * The outgoing deliveries: their queue, log and replays, shared by every process of the deployment (the
   * integrator delivers; the APIs read the log and look up a redelivery). Opened where a service uses it.
   */
  deliveries(): DeliveryStore;
  /** Adds a started service's sources to `/metrics`. */
  measure(sources: MetricSources): void;
  /** Closes what the kernel opened, once every service has stopped. */
  stop(): Promise<void>;
}

export interface KernelNeeds {
  /** Read threads for the query API (embedded read store only). */
  readonly readThreads: boolean;
  readonly attemptLog: boolean;
  readonly deliveryStore: boolean;
}

/** Where hook addresses point: HOOK_BASE_URL, or this platform's own receiver. */
export function hookBaseUrl(config: Config): string {
  return (config.HOOK_BASE_URL ?? `http://${config.BASE_HOST}:${config.PORT}/hook`).replace(/\/+$/, '');
}

/** The domain of mailhook addresses: MAIL_DOMAIN, or the platform's host name. */
export function mailDomain(config: Config): string {
  return (config.MAIL_DOMAIN ?? config.BASE_HOST).toLowerCase();
}

/** What a file given to a record may be (an upload, or a file a scenario attaches). */
export function uploadLimits(config: Config): UploadLimits {
  return {
    maxBytes: config.FILE_MAX_BYTES,
    contentTypes: new Set(config.FILE_CONTENT_TYPES ?? DEFAULT_FILE_CONTENT_TYPES),
  };
}

/** Calls to addresses users configure (buttons, HTTP request steps), through the SSRF guard. */
export function outboundOf(config: Config): OutboundHttp {
  return guardedHttp({
    allowNonPublic: config.OUTBOUND_ALLOW_PRIVATE,
    timeoutMs: config.OUTBOUND_TIMEOUT_MS,
  });
}

/**
 * Builds the kernel. Each append of this process, once stored and before it is answered, raises the last
 * position and records the credential heads (DESIGN §6), through the event store's after-commit hooks.
 */
export async function openKernel(
  config: Config,
  logger: Logger,
  adapters: Adapters,
  needs: KernelNeeds,
): Promise<Kernel> {
  const events = adapters.events;
  let lastPosition = 0n;
  const heads = credentialHeads(
    events,
    adapters.readStore,
    READ_MODEL_PROJECTIONS.filter((projection) => CREDENTIAL_PROJECTIONS.includes(projection.name)),
  );
  const removeHooks = [
    events.onAfterCommit((commits) => {
      for (const { position } of commits) if (position > lastPosition) lastPosition = position;
    }),
    events.onAfterCommit(recordCredentialHeads(heads)),
  ];
  const readPool = needs.readThreads ? await startReadPool(config, logger) : undefined;
  const attemptLog = needs.attemptLog ? await openAttemptLog(config) : undefined;
  const deliveryStore = needs.deliveryStore ? await openDeliveryStore(config) : undefined;
  const sources: MetricSources[] = [];
  const metrics = new Metrics(
    async () => {
      const lags = sources.flatMap((source) => (source.projectionLag ? [source.projectionLag] : []));
      if (lags.length === 0) return [];
      const head = await events.headPosition();
      return lags.flatMap((lag) => lag(head));
    },
    async () => sources.find((source) => source.integrator)?.integrator?.(),
    () => sources.reduce((calls, source) => calls + (source.aiCallsInFlight?.() ?? 0), 0),
    async () => (await sources.find((source) => source.deadLetters)?.deadLetters?.()) ?? new Map(),
  );
  return {
    config,
    logger,
    adapters,
    handler: new CommandHandler(events, new AggregateCache()),
    ids: new IdAllocator(events),
    idempotency: new IdempotencyKeys(events),
    readModels: new ReadModels(readPool ? pooledReadStore(adapters.readStore, readPool) : adapters.readStore),
    credentialHeads: heads,
    lastPosition: () => lastPosition,
    deadLetters: new DeadLetters({
      events,
      readStore: adapters.readStore,
      projections: READ_MODEL_PROJECTIONS,
    }),
    metrics,
    meter: new ApiMeter({
      store: adapters.readStore,
      ...(attemptLog && { shared: attemptLog }),
      ...(config.QUOTA_CALLS_PER_MINUTE !== undefined && { quotaPerMinute: config.QUOTA_CALLS_PER_MINUTE }),
      ...(config.TENANT_QUOTAS !== undefined && { tenantQuotas: config.TENANT_QUOTAS }),
    }),
    ...secretsOf(config),
    hookAddresses: { baseUrl: hookBaseUrl(config), mailDomain: mailDomain(config), now: () => new Date() },
    attempts() {
      if (!attemptLog) throw new Error('the attempt log was not opened for the services of this process');
      return attemptLog;
    },
    deliveries() {
      if (!deliveryStore)
        throw new Error('the delivery store was not opened for the services of this process');
      return deliveryStore;
    },
    measure(added) {
      sources.push(added);
    },
    async stop() {
      for (const remove of removeHooks) remove();
      await attemptLog?.close();
      await deliveryStore?.close();
      await readPool?.close();
    },
  };
}

function secretsOf(config: Config): { sealer: Sealer; accessTokens: AccessTokens } {
  const sealer = createSealer(loadMasterKey(config.SECRETS_KEY, resolve(config.DATA_DIR)));
  return { sealer, accessTokens: createAccessTokens(sealer.derivedKey('oauth-access-tokens')) };
}
