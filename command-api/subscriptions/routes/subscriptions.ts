import type { Router } from 'express';
import {
  rotateSubscriptionSecret as rotateOperation,
  rotateSubscriptionSecretBody,
  SUBSCRIPTION_OPERATIONS,
  createSubscriptionBody,
  updateSubscriptionBody,
} from '../../../contracts/api/subscriptions';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { idParam } from '../../../infra/http/params';
import type { CommandDeps } from '../../deps';
import { addResourceRoutes } from '../../kit/resource-routes';
import { authorize, commandContext, preconditions, sendResult } from '../../kit/route-context';
import { rotateSubscriptionSecret, subscriptionSpec, subscriptionWithSecret } from '../commands';

/** Subscriptions: create (answering the secret once), update, delete, rotate the secret. */
export function addSubscriptionRoutes(router: Router, deps: CommandDeps): void {
  // Before the resource's `/subscription/{subscriptionId}` routes, which share the first segments.
  mount(router, rotateOperation, async (req, res) => {
    const principal = authorize(req, 'subscription', 'update');
    const subscriptionId = idParam(req, 'subscriptionId');
    const { overlapMinutes } = validate(rotateSubscriptionSecretBody, req.body ?? {}, 'body');
    const result = await rotateSubscriptionSecret(
      deps,
      commandContext(req, principal, deps.newCommandId()),
      subscriptionId,
      overlapMinutes,
      preconditions(req),
    );
    sendResult(res, 200, result, subscriptionWithSecret(deps, result.state));
  });
  addResourceRoutes(router, deps, {
    ...subscriptionSpec(deps),
    idParam: 'subscriptionId',
    operations: SUBSCRIPTION_OPERATIONS,
    createBody: createSubscriptionBody,
    updateBody: updateSubscriptionBody,
    createdView: (state) => subscriptionWithSecret(deps, state),
  });
}
