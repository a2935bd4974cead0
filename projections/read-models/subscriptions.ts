import { READ_MODELS } from '../../contracts/read-models';
import { SEALED_SUBSCRIPTION_KEYS } from '../../contracts/events/subscriptions';
import { entityProjection, setAllBut } from './entity';

/** Subscriptions as they stand; sealed secrets stay in the events, only the previous one's expiry shows. */
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
    SubscriptionChanged: setAllBut('subscriptionId'),
    SubscriptionSecretRotated: (data) => ({ set: { previousSecretExpiresAt: data.previousExpiresAt } }),
    SubscriptionDisabled: (data) => ({ set: { active: false, disabledReason: data.reason } }),
    SubscriptionEnabled: () => ({ set: { active: true, disabledReason: null } }),
  },
});
