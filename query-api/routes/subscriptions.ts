import type { Router } from 'express';
import { listSubscriptionHistory, SUBSCRIPTION_OPERATIONS } from '../../contracts/api/subscriptions';
import { PlatformError } from '../../contracts/errors';
import { READ_MODELS } from '../../contracts/read-models';
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

/** Subscriptions: list (the list language), read one, and its history. */
export function addSubscriptionReadRoutes(router: Router, deps: EntityReadDeps): void {
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
