import { randomBytes, randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { createSubscriptionBody, updateSubscriptionBody } from '../../contracts/api/subscriptions';
import { PlatformError } from '../../contracts/errors';
import { streamName } from '../../contracts/streams';
import { DEFAULT_SECRET_OVERLAP_MINUTES, SIGNING_SECRET_PREFIX } from '../../contracts/subscriptions';
import { isNonPublicAddress } from '../../infra/outbound/guarded-http';
import type { CommandDeps } from '../deps';
import { checkedListTexts } from '../records/commands';
import type { CommandContext, CommandResult, HandleOptions } from '../kit/handler';
import type { ResourceCommandSpec } from '../kit/resource-commands';
import {
  subscriptionDecider,
  type SealedHeaders,
  type SubscriptionCommand,
  type SubscriptionState,
} from './domain/subscription';
import type { SubscriptionEvent } from '../../contracts/events/subscriptions';
import type { Sealer } from '../../infra/secrets/sealer';

export type CreateSubscriptionBody = z.infer<typeof createSubscriptionBody>;
export type UpdateSubscriptionBody = z.infer<typeof updateSubscriptionBody>;

/** Host names that always mean this machine or a cloud's metadata service. */
const PRIVATE_NAMES = ['localhost', 'metadata.google.internal'];

/**
 * Refuses an address the SSRF guard would refuse whatever DNS says: a literal private, loopback, link-local or
 * metadata address, or `localhost`. A name that resolves to such an address is refused by the guard at
 * delivery, where it is resolved and pinned.
 */
export function checkSubscriptionUrl(url: string, allowPrivate: boolean): void {
  if (allowPrivate) return;
  const host = new URL(url).hostname.toLowerCase();
  // `localhost.` is `localhost`: a trailing dot only says the name is complete.
  const literal = host.startsWith('[') ? host.slice(1, -1) : host.replace(/\.$/, '');
  const named = PRIVATE_NAMES.some((name) => literal === name || literal.endsWith(`.${name}`));
  const isLiteralIp = /^[\d.]+$/.test(literal) || literal.includes(':');
  if (named || (isLiteralIp && isNonPublicAddress(literal)))
    throw new PlatformError(
      'validation_failed',
      `url: ${host} is a private, loopback, link-local or metadata address; subscriptions deliver to public addresses only`,
      [{ path: 'url', message: 'not a public address' }],
    );
}

/** A filter, checked as a record list of the whole system would check it (empty text: none). */
async function checkedFilter(
  deps: Pick<CommandDeps, 'reads'>,
  tenant: string,
  text: string | null | undefined,
): Promise<string | null | undefined> {
  const checked = await checkedListTexts((named) => deps.reads.recordFieldsOfSystem(tenant, named), {
    ...(text !== undefined && { filter: text }),
  });
  return checked.filter;
}

/** A new signing secret, as Standard Webhooks writes one. */
export function newSigningSecret(): string {
  return `${SIGNING_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** A subscription's extra headers (name → value), sealed whole: values may be credentials. */
export function sealHeaders(sealer: Pick<Sealer, 'seal'>, headers: Record<string, string>): SealedHeaders {
  const headerNames = Object.keys(headers);
  return {
    headerNames,
    sealedHeaders: headerNames.length === 0 ? null : sealer.seal(JSON.stringify(headers)),
  };
}

/** The extra headers in clear (name → value), for the delivery to send; none sealed: none. */
export function headersOf(
  sealer: Pick<Sealer, 'open'>,
  state: Pick<SubscriptionState, 'settings'>,
): Record<string, string> {
  const { sealedHeaders } = state.settings;
  return sealedHeaders === null ? {} : (JSON.parse(sealer.open(sealedHeaders)) as Record<string, string>);
}

/** What reads show of a subscription: never a secret, sealed or not, nor a header's value. */
export function subscriptionView(state: SubscriptionState): Record<string, unknown> {
  const { name, url, events, filter, headerNames } = state.settings;
  return {
    id: state.subscriptionId,
    name,
    url,
    events,
    filter,
    headerNames,
    active: state.active,
    disabledReason: state.disabledReason,
    previousSecretExpiresAt: state.previousExpiresAt,
  };
}

/** The create answer: the view and the secret, which only the creator (or a repeat of the create) sees. */
export function subscriptionWithSecret(
  deps: Pick<CommandDeps, 'sealer'>,
  state: SubscriptionState,
): Record<string, unknown> {
  return { ...subscriptionView(state), secret: deps.sealer.open(state.sealedSecret) };
}

const streamOf = (tenant: string, subscriptionId: number) =>
  streamName('subscription', tenant, subscriptionId);

/**
 * `headers` sealed, unless they are the subscription's current ones (undefined): the decider compares only
 * sealed text, which differs each time the same map is sealed.
 */
async function changedHeaders(
  deps: Pick<CommandDeps, 'handler' | 'sealer'>,
  tenant: string,
  subscriptionId: number,
  headers: Record<string, string>,
): Promise<SealedHeaders | undefined> {
  const { state } = await deps.handler.load(streamOf(tenant, subscriptionId), subscriptionDecider);
  return JSON.stringify(headersOf(deps.sealer, state)) === JSON.stringify(headers)
    ? undefined
    : sealHeaders(deps.sealer, headers);
}

/** Subscriptions as a resource: create (with a sealed new secret), update, delete. */
export function subscriptionSpec(
  deps: Pick<CommandDeps, 'handler' | 'reads' | 'sealer' | 'subscriptions' | 'hooks'>,
): ResourceCommandSpec<
  SubscriptionState,
  SubscriptionCommand,
  SubscriptionEvent,
  CreateSubscriptionBody,
  UpdateSubscriptionBody
> {
  const { allowPrivateUrls, maxPerSystem } = deps.subscriptions;
  return {
    noun: 'subscription',
    decider: subscriptionDecider,
    async prepareCreate(body, tenant) {
      checkSubscriptionUrl(body.url, allowPrivateUrls);
      const filter = (await checkedFilter(deps, tenant, body.filter)) ?? null;
      if ((await deps.reads.subscriptionCount(tenant)) >= maxPerSystem)
        throw new PlatformError(
          'conflict',
          `this system has ${maxPerSystem} subscriptions, as many as it may (SUBSCRIPTIONS_PER_SYSTEM); delete one first`,
        );
      const settings = {
        name: body.name,
        url: body.url,
        events: body.events,
        filter,
        ...sealHeaders(deps.sealer, body.headers ?? {}),
      };
      const sealedSecret = deps.sealer.seal(newSigningSecret());
      const now = deps.hooks.now();
      return (subscriptionId) => ({
        kind: 'CreateSubscription',
        subscriptionId,
        settings,
        active: body.active ?? true,
        sealedSecret,
        now,
      });
    },
    // One create at a time per system, so the count above sees the one before it.
    createQueueKey: (_body, tenant) => tenant,
    async prepareUpdate(body, tenant, id) {
      const { id: _id, active, filter, headers, ...settings } = body;
      if (settings.url !== undefined) checkSubscriptionUrl(settings.url, allowPrivateUrls);
      const checkedText = await checkedFilter(deps, tenant, filter);
      return {
        kind: 'UpdateSubscription',
        settings: { ...settings, ...(checkedText !== undefined && { filter: checkedText }) },
        headers: headers === undefined ? undefined : await changedHeaders(deps, tenant, id, headers),
        active,
      };
    },
    prepareDelete: async () => ({ kind: 'DeleteSubscription' }),
    view: subscriptionView,
  };
}

/** Rotates subscription `subscriptionId`'s secret: a new one, sealed before the command; the old one overlaps. */
export async function rotateSubscriptionSecret(
  deps: Pick<CommandDeps, 'handler' | 'sealer' | 'hooks'>,
  context: CommandContext,
  subscriptionId: number,
  overlapMinutes: number | undefined,
  options: HandleOptions,
): Promise<CommandResult<SubscriptionState>> {
  return deps.handler.handle(
    streamOf(context.tenant, subscriptionId),
    subscriptionDecider,
    {
      kind: 'RotateSubscriptionSecret',
      sealedSecret: deps.sealer.seal(newSigningSecret()),
      overlapMinutes: overlapMinutes ?? DEFAULT_SECRET_OVERLAP_MINUTES,
      now: deps.hooks.now(),
    },
    context,
    options,
  );
}

/** Which events a replay delivers again: after one position, up to another (null: up to the request). */
export interface ReplayRange {
  readonly after: bigint;
  readonly until: bigint | null;
  /** A redelivery of one event. */
  readonly eventId: string | null;
}

/**
 * Asks the integrator to deliver the subscription's matching events of `range` again: a replay (until the
 * request) or the redelivery of one event. Answers what the API shows of a replay just asked for.
 */
export async function requestReplay(
  deps: Pick<CommandDeps, 'handler' | 'hooks'>,
  context: CommandContext,
  subscriptionId: number,
  range: ReplayRange,
): Promise<Record<string, unknown>> {
  const replayId = randomUUID();
  await deps.handler.handle(
    streamOf(context.tenant, subscriptionId),
    subscriptionDecider,
    { kind: 'RequestReplay', replayId, ...range },
    context,
  );
  return {
    id: replayId,
    subscriptionId,
    after: range.after.toString(),
    until: range.until === null ? null : range.until.toString(),
    eventId: range.eventId,
    queued: 0,
    requestedAt: deps.hooks.now().toISOString(),
    finishedAt: null,
    status: 'requested',
  };
}

/** Turns off a subscription whose deliveries keep failing (the integrator's decision), saying why. */
export async function disableSubscription(
  deps: Pick<CommandDeps, 'handler'>,
  context: CommandContext,
  subscriptionId: number,
  reason: string,
): Promise<void> {
  await deps.handler.handle(
    streamOf(context.tenant, subscriptionId),
    subscriptionDecider,
    { kind: 'DisableSubscription', reason },
    context,
  );
}
