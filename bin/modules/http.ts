import type { Express } from 'express';
import { OPERATIONS } from '../../contracts/api/index';
import { appVersion } from '../../infra/config';
import { createHttpApp, type ReadinessReport } from '../../infra/http/app';
import { tokenAuthenticator } from '../../infra/http/authenticate';
import { SessionActivity } from '../../infra/http/session-activity';
import type { Projections } from '../../projections/host';
import type { Kernel } from '../kernel';
import { checkpointOf, type ReadSide } from '../read-consistency';
import type { HttpMounts, ServiceModule } from '../service-module';

/** How often the API usage counted in this process is written to the read store. */
const METER_FLUSH_MS = 5000;

export interface HttpService extends ServiceModule {
  readonly app: Express;
}

/**
 * The process's HTTP app: the kit (authentication, systems, errors, metering, health, metrics) around the
 * services' routers; the MCP tool server where `mcp`.
 */
export function httpService(
  kernel: Kernel,
  reads: ReadSide,
  options: {
    readonly mounts: HttpMounts;
    /** The projections, where they run here: readiness and the credential cache's stamp. */
    readonly projections: Projections | undefined;
    readonly mcp: boolean;
  },
): HttpService {
  const { config, logger, meter } = kernel;
  const { projections } = options;
  const readStore = kernel.adapters.readStore;
  const app = createHttpApp({
    ...(options.mcp && {
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
    authenticate: tokenAuthenticator(kernel.readModels, {
      // Positions only grow, so their sum changes whenever either projection moves: the cache's stamp.
      identityPosition: projections
        ? () => projections.positionOf('identity') + projections.positionOf('oauth')
        : async () => (await checkpointOf(readStore, 'identity')) + (await checkpointOf(readStore, 'oauth')),
      accessTokens: kernel.accessTokens,
      sessions: {
        idleMs: config.SESSION_IDLE_MINUTES * 60_000,
        activity: new SessionActivity(readStore, 60_000, (error) =>
          logger.warn({ err: error }, 'recording session activity failed'),
        ),
      },
      awaitCredentialWrites: () => reads.awaitCredentialWrites(),
    }),
    meter,
    readiness: () => Promise.resolve(readinessOf(projections)),
    metrics: () => kernel.metrics.render(),
    ...(config.METRICS_TOKEN !== undefined && { metricsToken: config.METRICS_TOKEN }),
    ...(config.HOOK_BASE_URL !== undefined && { hookHost: new URL(config.HOOK_BASE_URL).hostname }),
    operations: OPERATIONS,
    ...options.mounts,
  });
  let meterTimer: NodeJS.Timeout | undefined;
  return {
    app,
    async start() {
      meterTimer = setInterval(() => {
        meter.flush().catch((error: unknown) => logger.warn({ err: error }, 'flushing API usage failed'));
      }, METER_FLUSH_MS);
      meterTimer.unref();
    },
    async stop() {
      clearInterval(meterTimer);
      // Nothing flushes after this one: what it cannot write is lost, and said so.
      await meter
        .flush()
        .catch((error: unknown) =>
          logger.error(
            { err: error, pendingCounts: meter.pendingCounts },
            'API usage counted since the last flush is lost: the read store refused it at shutdown',
          ),
        );
    },
  };
}

/** Ready once every projection run here has caught up without an error (where none runs: at once). */
function readinessOf(projections: Projections | undefined): ReadinessReport {
  const statuses = projections?.status() ?? [];
  return {
    ready: statuses.every((status) => status.caughtUp && status.error === undefined),
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
}
