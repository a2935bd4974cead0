import { newId } from '../../contracts/ids';
import { createCommandRouter } from '../../command-api/app';
import { AiSlots } from '../../command-api/ai/ai-slots';
import { AiJobs } from '../../command-api/ai/jobs';
import { exponentialBackoff, MeteredModel } from '../../command-api/ai/metered-model';
import { SystemModels } from '../../command-api/ai/system-models';
import { ensureBootstrapAdmin } from '../../command-api/identity/bootstrap';
import { createOpenAiLanguageModel } from '../../infra/ai/language-model/openai';
import type { Config } from '../../infra/config';
import { positionBefore } from '../../infra/event-store/position-at-time';
import { readModelCommandReads } from '../../infra/read-store/command-reads';
import { awaitPosition } from '../../query-api/consistency';
import { outboundOf, uploadLimits, type Kernel } from '../kernel';
import type { ReadSide } from '../read-consistency';
import type { ServiceModule } from '../service-module';
import type { HookReceiversService } from './hook-receivers';

/** How often a command-api process deletes expired sign-in attempts. */
const ATTEMPT_SWEEP_MS = 60_000;

/** How long the start waits for the bootstrap admin to be visible to the projections of this process. */
const BOOTSTRAP_VISIBLE_MS = 30_000;

export interface CommandApiService extends ServiceModule {
  /** The bootstrap admin's API token, when this start created it (shown once). */
  readonly generatedToken: string | undefined;
}

/** The deployment's model for the AI features, when one is configured (AI_URL). */
function deploymentModelOf(config: Config) {
  if (config.AI_URL === undefined) return null;
  return { baseUrl: config.AI_URL, model: config.AI_MODEL, timeoutMs: config.AI_TIMEOUT_MS };
}

/**
 * The command API: its routes, the AI jobs it runs, and the bootstrap admin, ensured at its start.
 * `soleProcess`: this process is the whole platform (so the AI jobs' leases at its start are its own).
 */
export function commandApiService(
  kernel: Kernel,
  reads: ReadSide,
  hooks: HookReceiversService | undefined,
  options: { readonly soleProcess: boolean },
): CommandApiService {
  const { config, logger, handler, ids, idempotency, metrics } = kernel;
  const { consistency } = reads;
  const attempts = kernel.attempts();
  const commandReads = readModelCommandReads(
    kernel.readModels,
    (projections) => awaitPosition(consistency, consistency.defaultMinPosition(), projections),
    () => reads.awaitCredentialWrites(),
    async (projections) =>
      awaitPosition(consistency, await kernel.adapters.events.headPosition(), projections),
  );
  // Model calls of AI jobs: fair between systems, bounded per system and per process.
  const aiSlots = new AiSlots(
    config.AI_MAX_CONCURRENCY,
    config.AI_TENANT_CONCURRENCY,
    config.AI_CREDENTIAL_CONCURRENCY,
  );
  const deploymentModel = deploymentModelOf(config);
  const systemModels = new SystemModels({
    aggregates: handler,
    operatorTenant: config.DEFAULT_TENANT,
    sealer: kernel.sealer,
    deployment:
      deploymentModel &&
      createOpenAiLanguageModel({ ...deploymentModel, apiKey: config.AI_API_KEY ?? 'none' }),
    defaultTimeoutMs: config.AI_TIMEOUT_MS,
    create: createOpenAiLanguageModel,
  });
  const now = kernel.hookAddresses.now;
  const meteredModel = new MeteredModel({
    handler,
    modelFor: (tenant) => systemModels.modelFor(tenant),
    now,
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
    now,
    logger: logger.child({ component: 'ai-jobs' }),
    concurrency: config.AI_CONCURRENCY,
    leaseMs: config.AI_JOB_LEASE_MS,
  });
  const router = createCommandRouter({
    handler,
    ids,
    idempotency,
    hooks: { ...kernel.hookAddresses, ...(hooks?.deliverJson && { deliverJson: hooks.deliverJson }) },
    newCommandId: newId,
    outbound: outboundOf(config),
    blobs: kernel.adapters.blobs,
    uploads: uploadLimits(config),
    logger: logger.child({ component: 'command-api' }),
    operatorTenant: config.DEFAULT_TENANT,
    deadLetters: kernel.deadLetters,
    sealer: kernel.sealer,
    accessTokens: kernel.accessTokens,
    socialLogin: config.SOCIAL_LOGIN ?? {},
    attempts,
    introspectionsPerMinute: config.OAUTH_INTROSPECTIONS_PER_MINUTE,
    subscriptions: {
      allowPrivateUrls: config.OUTBOUND_ALLOW_PRIVATE,
      maxPerSystem: config.SUBSCRIPTIONS_PER_SYSTEM,
      deliveries: () => kernel.deliveries(),
      // Events' times only: the log as stored, no personal value opened.
      positionBefore: (time) => positionBefore(kernel.adapters.events.sealed, time),
    },
    ai: {
      model: meteredModel,
      jobs: aiJobs,
      slots: aiSlots,
      slotWaitMs: config.AI_TIMEOUT_MS,
      executeWaitMs: config.AI_EXECUTE_WAIT_MS,
      systems: systemModels,
      deployment: deploymentModel,
    },
    sessions: {
      idleMs: config.SESSION_IDLE_MINUTES * 60_000,
      maxAgeMs: config.SESSION_MAX_HOURS * 3_600_000,
    },
    reads: commandReads,
    personalData: kernel.adapters.events,
  });
  let generatedToken: string | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  return {
    get generatedToken() {
      return generatedToken;
    },
    http: { command: router },
    metrics: { aiCallsInFlight: () => aiSlots.inUse },
    async start() {
      ({ generatedToken } = await ensureBootstrapAdmin(handler, ids, {
        tenant: config.DEFAULT_TENANT,
        email: config.ADMIN_EMAIL,
        ...(config.ADMIN_PASSWORD !== undefined && { password: config.ADMIN_PASSWORD }),
        ...(config.ADMIN_TOKEN !== undefined && { token: config.ADMIN_TOKEN }),
      }));
      // Where the projections run here, the admin can sign in once the start is over.
      const written = consistency.defaultMinPosition();
      if (written > 0n) await consistency.waitFor(written, ['identity'], BOOTSTRAP_VISIBLE_MS);
      sweepTimer = setInterval(() => {
        attempts
          .sweep(Date.now())
          .catch((error: unknown) => logger.warn({ err: error }, 'deleting expired sign-in attempts failed'));
      }, ATTEMPT_SWEEP_MS);
      sweepTimer.unref();
      // Jobs a stopped process left: resumed here once their lease has run out.
      aiJobs.startResuming(options.soleProcess);
    },
    async stop() {
      clearInterval(sweepTimer);
      await aiJobs.stop();
    },
  };
}
