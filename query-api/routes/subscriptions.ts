import type { Router } from 'express';
import {
  deliveryLogQuery,
  listSubscriptionDeliveries,
  listSubscriptionHistory,
  listSubscriptionReplays,
  SUBSCRIPTION_OPERATIONS,
} from '../../contracts/api/subscriptions';
import { PlatformError } from '../../contracts/errors';
import { READ_MODELS } from '../../contracts/read-models';
import { validate } from '../../contracts/validation';
import type { DeliveryAttempt, DeliveryStore, Replay } from '../../infra/deliveries/port';
import type { Document } from '../../contracts/read-model-changes';
import { streamName } from '../../contracts/streams';
import { catalogue } from '../../languages/filter/resolve';
import { AUDIT_COLUMNS } from '../../languages/filter/record-fields';
import { equals } from '../../languages/filter/store-query';
import { mount } from '../../infra/http/operations';
import { idParam } from '../../infra/http/params';
import { sendJson } from '../../infra/http/respond';
import { auditView } from '../representations';
import { AUDIT_FIELDS } from './catalogues';
import {
  addEntityRoutes,
  authorize,
  readOne,
  readPage,
  type EntityDescription,
  type EntityReadDeps,
} from './entities';

const SUBSCRIPTION_FIELDS = catalogue({
  id: { path: 'subscriptionId', type: 'integer' },
  name: { path: 'name', type: 'string' },
  url: { path: 'url', type: 'string' },
  active: { path: 'active', type: 'boolean' },
  ...AUDIT_COLUMNS,
});

function subscriptionView(doc: Document): Record<string, unknown> {
  return {
    id: doc.subscriptionId,
    name: doc.name,
    url: doc.url,
    events: doc.events,
    filter: doc.filter ?? null,
    headerNames: doc.headerNames ?? [],
    active: doc.active,
    disabledReason: doc.disabledReason ?? null,
    previousSecretExpiresAt: doc.previousSecretExpiresAt ?? null,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    createdBy: doc.createdBy ?? null,
    updatedBy: doc.updatedBy ?? null,
  };
}

const SUBSCRIPTIONS: EntityDescription = {
  module: 'subscription',
  collection: READ_MODELS.subscriptions,
  projection: 'subscriptions',
  fields: SUBSCRIPTION_FIELDS,
  view: subscriptionView,
  noun: 'subscription',
};

/** A subscription's history reads the audit trail of its stream (secrets never enter it). */
const SUBSCRIPTION_HISTORY: EntityDescription = {
  module: 'subscription',
  collection: READ_MODELS.audit,
  projection: 'audit',
  fields: AUDIT_FIELDS,
  view: auditView,
  noun: 'audit entry',
  defaultOrder: [{ path: 'position', direction: 'desc' }],
};

export interface SubscriptionReadDeps extends EntityReadDeps {
  /** The delivery log and replays, shared by every process of the deployment. */
  readonly deliveries: () => DeliveryStore;
}

const REPLAY_ORIGIN = /^replay:(.+)$/;
const iso = (at: number | null) => (at === null ? null : new Date(at).toISOString());

function attemptView(attempt: DeliveryAttempt & { readonly id: string }): Record<string, unknown> {
  return {
    id: attempt.id,
    eventId: attempt.eventId,
    eventType: attempt.eventType,
    position: attempt.position.toString(),
    replayId: REPLAY_ORIGIN.exec(attempt.origin)?.[1] ?? null,
    attempt: attempt.attempt,
    at: iso(attempt.at),
    status: attempt.status,
    latencyMs: attempt.latencyMs,
    responseStatus: attempt.responseStatus,
    responseBody: attempt.responseBody,
    error: attempt.error,
    nextAttemptAt: iso(attempt.nextAttemptAt),
  };
}

function replayView(replay: Replay): Record<string, unknown> {
  return {
    id: replay.replayId,
    subscriptionId: replay.subscriptionId,
    after: replay.after.toString(),
    until: replay.until.toString(),
    eventId: replay.eventId,
    queued: replay.queued,
    requestedAt: iso(replay.requestedAt),
    finishedAt: iso(replay.finishedAt),
    status: replay.finishedAt !== null ? 'finished' : replay.cursor > replay.after ? 'running' : 'requested',
  };
}

/** The subscription, or a 404: the log of one that never was (or was deleted) is not there to read. */
async function subscriptionOf(req: Parameters<typeof authorize>[0], deps: SubscriptionReadDeps) {
  const tenant = authorize(req, 'subscription', 'read');
  const subscriptionId = idParam(req, 'subscriptionId');
  await readOne(req, deps, SUBSCRIPTIONS, subscriptionId);
  return { tenant, subscriptionId };
}

/** Subscriptions: list (the list language), read one, its history, its delivery log and its replays. */
export function addSubscriptionReadRoutes(router: Router, deps: SubscriptionReadDeps): void {
  mount(router, listSubscriptionDeliveries, async (req, res) => {
    const ref = await subscriptionOf(req, deps);
    const query = validate(deliveryLogQuery, req.query, 'query');
    const page = await deps.deliveries().attempts({ ...ref, ...query });
    sendJson(res, 200, { items: page.attempts.map(attemptView), next: page.next });
  });
  mount(router, listSubscriptionReplays, async (req, res) => {
    const ref = await subscriptionOf(req, deps);
    sendJson(res, 200, { items: (await deps.deliveries().replays(ref, 100)).map(replayView) });
  });
  // Before `/subscription/{subscriptionId}`, which it extends.
  mount(router, listSubscriptionHistory, async (req, res) => {
    const tenant = authorize(req, 'subscription', 'read');
    const subscriptionId = idParam(req, 'subscriptionId');
    const page = await readPage(
      req,
      deps,
      SUBSCRIPTION_HISTORY,
      equals('streamId', streamName('subscription', tenant, subscriptionId)),
    );
    // A deleted subscription keeps its history; one that never was has none.
    const { meta } = page as { meta: { total: number } };
    if (meta.total === 0) throw new PlatformError('not_found', `subscription ${subscriptionId} not found`);
    sendJson(res, 200, page);
  });
  addEntityRoutes(router, deps, SUBSCRIPTION_OPERATIONS, 'subscriptionId', SUBSCRIPTIONS);
}
