import type { Router } from 'express';
import {
  redeliverSubscriptionEvent,
  replaySubscription,
  replaySubscriptionBody,
  rotateSubscriptionSecret as rotateOperation,
  rotateSubscriptionSecretBody,
  SUBSCRIPTION_OPERATIONS,
  createSubscriptionBody,
  updateSubscriptionBody,
} from '../../../contracts/api/subscriptions';
import { PlatformError } from '../../../contracts/errors';
import { canonicalPosition } from '../../../contracts/positions';
import { rfc3339Moment } from '../../../contracts/times';
import { validate } from '../../../contracts/validation';
import { sendJson } from '../../../infra/http/respond';
import { mount } from '../../../infra/http/operations';
import { idParam } from '../../../infra/http/params';
import type { CommandDeps } from '../../deps';
import { addResourceRoutes } from '../../kit/resource-routes';
import { authorize, commandContext, preconditions, sendResult } from '../../kit/route-context';
import {
  requestReplay,
  rotateSubscriptionSecret,
  subscriptionSpec,
  subscriptionWithSecret,
} from '../commands';

/**
 * Subscriptions: create (answering the secret once), update, delete, rotate the secret, replay from a
 * position or a time, redeliver one event.
 */
export function addSubscriptionRoutes(router: Router, deps: CommandDeps): void {
  mount(router, replaySubscription, async (req, res) => {
    const principal = authorize(req, 'subscription', 'update');
    const subscriptionId = idParam(req, 'subscriptionId');
    const { from } = validate(replaySubscriptionBody, req.body, 'body');
    // A position is where the replay starts; a time, the first event recorded at or after it.
    const fromPosition = canonicalPosition(from);
    const after =
      fromPosition === undefined
        ? await deps.subscriptions.positionBefore(rfc3339Moment(from)!)
        : fromPosition > 0n
          ? fromPosition - 1n
          : 0n;
    const replay = await requestReplay(
      deps,
      commandContext(req, principal, deps.newCommandId()),
      subscriptionId,
      {
        after,
        until: null,
        eventId: null,
      },
    );
    sendJson(res, 202, replay);
  });
  mount(router, redeliverSubscriptionEvent, async (req, res) => {
    const principal = authorize(req, 'subscription', 'update');
    const subscriptionId = idParam(req, 'subscriptionId');
    const { eventId } = validate(redeliverSubscriptionEvent.params!, req.params, 'path');
    const attempt = await deps.subscriptions
      .deliveries()
      .lastAttemptOf({ tenant: principal.tenant, subscriptionId }, eventId);
    if (attempt === null)
      throw new PlatformError(
        'not_found',
        `no attempt of event ${eventId} to subscription ${subscriptionId} is in the delivery log`,
      );
    const replay = await requestReplay(
      deps,
      commandContext(req, principal, deps.newCommandId()),
      subscriptionId,
      { after: attempt.position - 1n, until: attempt.position, eventId },
    );
    sendJson(res, 202, replay);
  });
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
