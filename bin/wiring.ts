import type { Express } from 'express';
import type { OpenHook } from '../command-api/hooks/intake';
import type { Config } from '../infra/config';
import type { ApiMeter } from '../infra/http/metering';
import type { Logger } from '../infra/logging';
import type { MailHandlers } from '../infra/smtp/mail-listener';
import type { Integrator } from '../integrator/consumer';
import type { IntegratorScheduler } from '../integrator/scheduler';
import type { Projections } from '../projections/host';
import type { Relay } from '../projections/relay';
import type { Adapters } from './adapters';
import { openKernel } from './kernel';
import { commandApiService } from './modules/command-api';
import { hookReceiversService } from './modules/hook-receivers';
import { httpService } from './modules/http';
import { integratorService } from './modules/integrator';
import { projectionsService } from './modules/projections';
import { queryApiService } from './modules/query-api';
import { relayService } from './modules/relay';
import { semanticSearchService } from './modules/semantic-search';
import { readSide } from './read-consistency';
import { ServiceStack } from './service-module';

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
  /** The first phase of a stop, while the HTTP server drains (see `ServiceModule.drain`). */
  drain(): Promise<void>;
  /** Stops the services in the reverse order of their start. */
  stop(): Promise<void>;
}

/**
 * Builds the chosen services on one set of adapters, each on the kernel and on what the ones started before
 * it provide. One-process mode selects everything; `bin/service` selects one.
 */
export async function buildServices(
  config: Config,
  logger: Logger,
  adapters: Adapters,
  selection: ServiceSelection,
): Promise<Services> {
  // The integrator takes mailhook email: where it runs, so does the SMTP listener (unless switched off).
  const receivesMail = selection.integrator && config.SMTP_ENABLED;
  const quotas = config.QUOTA_CALLS_PER_MINUTE !== undefined || config.TENANT_QUOTAS !== undefined;
  const kernel = await openKernel(config, logger, adapters, {
    readThreads: selection.query,
    attemptLog: selection.command || receivesMail || (selection.query && quotas),
    deliveryStore: selection.command || selection.query || selection.integrator,
  });
  const services = new ServiceStack(kernel);
  const relays = selection.relay && config.RELAY;
  const projections = selection.projections
    ? await services.start(projectionsService(kernel, { relay: relays }))
    : undefined;
  // On the projections thread where it runs beside them, on this one elsewhere.
  const relay = relays && !projections?.relays ? await services.start(relayService(kernel)) : undefined;
  // Where records are searched (query) or their vectors made (projections).
  const semantic =
    config.SEMANTIC_SEARCH && (selection.query || selection.projections)
      ? await services.start(semanticSearchService(kernel, projections?.host))
      : undefined;
  const reads = readSide(kernel, projections?.host, semantic);
  const integration = selection.integrator ? await services.start(integratorService(kernel)) : undefined;
  const hooks =
    selection.command || receivesMail
      ? await services.start(hookReceiversService(kernel, { http: selection.command, mail: receivesMail }))
      : undefined;
  const command = selection.command
    ? await services.start(
        commandApiService(kernel, reads, hooks, {
          soleProcess: Object.values(selection).every((selected) => selected),
        }),
      )
    : undefined;
  if (selection.query) await services.start(queryApiService(kernel, reads, semantic?.search));
  const http = await services.start(
    httpService(kernel, reads, {
      mounts: services.httpMounts(),
      projections: projections?.host,
      // The MCP tools call both APIs: served where both run, or where MCP_API_URL names the API to call.
      mcp: (selection.command && selection.query) || config.MCP_API_URL !== undefined,
    }),
  );
  return {
    app: http.app,
    ...(projections && { host: projections.host }),
    ...(relay && { relay: relay.relay }),
    ...(integration && { integrator: integration.integrator, integratorScheduler: integration.scheduler }),
    meter: kernel.meter,
    ...(command?.generatedToken !== undefined && { generatedToken: command.generatedToken }),
    ...(hooks?.mail && { mail: hooks.mail }),
    drain: () => services.drain(),
    stop: () => services.stop(),
  };
}
