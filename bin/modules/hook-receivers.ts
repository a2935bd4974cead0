import { createHookIntake, type OpenHook } from '../../command-api/hooks/intake';
import { createHookReceiver, type HookReceiver } from '../../command-api/hooks/http-receiver';
import { createMailReceiver } from '../../command-api/hooks/mail-receiver';
import { HookResponses } from '../../command-api/hooks/responses';
import type { MailHandlers } from '../../infra/smtp/mail-listener';
import type { Kernel } from '../kernel';
import type { ServiceModule } from '../service-module';

export interface HookReceiversService extends ServiceModule {
  /** Delivery to a hook from inside the platform, where this process receives webhooks. */
  readonly deliverJson?: HookReceiver['deliverJson'];
  /** Where the SMTP listener hands mailhook email, where this process receives it. */
  readonly mail?: MailHandlers<OpenHook>;
}

/**
 * Receiving hooks: one intake (each request an event before its answer) under the webhook receiver
 * (`http`, with the command API: it waits for runs' responses) and the mailhook receiver (`mail`, where the
 * integrator runs).
 */
export function hookReceiversService(
  kernel: Kernel,
  receives: { readonly http: boolean; readonly mail: boolean },
): HookReceiversService {
  const { config } = kernel;
  const logger = kernel.logger.child({ component: 'hook-receiver' });
  const responses = receives.http ? new HookResponses(kernel.adapters.events, logger) : undefined;
  const intake = createHookIntake({
    handler: kernel.handler,
    attempts: kernel.attempts(),
    blobs: kernel.adapters.blobs,
    ...(responses && { responses }),
    logger,
    operatorTenant: config.DEFAULT_TENANT,
    now: kernel.hookAddresses.now,
  });
  const receiver =
    receives.http && createHookReceiver({ intake, logger, trustedProxies: config.HOOK_TRUSTED_PROXIES });
  const mail =
    receives.mail &&
    createMailReceiver({
      intake,
      mailDomain: kernel.hookAddresses.mailDomain,
      logger: kernel.logger.child({ component: 'mail-receiver' }),
    });
  return {
    ...(receiver && { http: { hooks: receiver.router }, deliverJson: receiver.deliverJson }),
    ...(mail && { mail }),
    async start() {
      await responses?.start();
    },
    // Requests waiting for their run's response are answered `Accepted` (the run goes on).
    async drain() {
      await responses?.stop();
    },
    async stop() {
      await responses?.stop();
    },
  };
}
