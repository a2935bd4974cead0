import { READ_MODELS } from '../../contracts/read-models';
import { SEALED_SUBSCRIPTION_KEYS } from '../../contracts/events/subscriptions';
import { entityProjection, setAllBut } from './entity';

/**
 * Subscriptions as they stand; sealed secrets and header values stay in the events: the previous secret shows
 * only as its expiry, the headers as their names.
 */
export const subscriptionsProjection = entityProjection({
  name: 'subscriptions',
  category: 'subscription',
  collection: READ_MODELS.subscriptions,
  indexes: [{ name: 'tenant_subscriptionId', paths: ['tenant', 'subscriptionId'] }],
  idKey: 'subscriptionId',
  created: 'SubscriptionCreated',
  initial: { disabledReason: null, previousSecretExpiresAt: null },
  omit: [...SEALED_SUBSCRIPTION_KEYS, 'createdAt'],
  deleted: 'SubscriptionDeleted',
  patches: {
    SubscriptionChanged: setAllBut('subscriptionId', ...SEALED_SUBSCRIPTION_KEYS),
    SubscriptionSecretRotated: (data) => ({ set: { previousSecretExpiresAt: data.previousExpiresAt } }),
    SubscriptionDisabled: (data) => ({ set: { active: false, disabledReason: data.reason } }),
    SubscriptionEnabled: () => ({ set: { active: true, disabledReason: null } }),
  },
});
