import type { Request, Response, Router } from 'express';
import {
  activateScenario,
  createScenarioBody,
  deactivateScenario,
  importScenario as importScenarioOperation,
  importScenarioBody,
  SCENARIO_OPERATIONS,
  updateScenarioBody,
} from '../../../contracts/api/integrator';
import { PlatformError } from '../../../contracts/errors';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { idParam, optionalId } from '../../../infra/http/params';
import type { ScenarioCommand } from '../domain/scenario';
import type { CommandDeps } from '../../deps';
import { requestHash } from '../../kit/idempotency';
import { authorize, callerOf, idempotencyKey, preconditions, sendResult } from '../../kit/route-context';
import { webhookView } from '../../hooks/commands';
import {
  changeScenario,
  createScenario,
  deleteScenario,
  importScenario,
  scenarioView,
  updateScenario,
} from '../commands';

/** Scenarios: their trigger (a webhook, one scenario each), schedule and steps; activate, deactivate. */
export function addScenarioRoutes(router: Router, deps: CommandDeps): void {
  mount(router, SCENARIO_OPERATIONS.create, async (req, res) => {
    const principal = authorize(req, 'scenario', 'create');
    const body = validate(createScenarioBody, req.body, 'body');
    const result = await createScenario(deps, callerOf(req, principal), body, {
      key: idempotencyKey(req),
      hash: () => requestHash('POST', '/scenario', body),
    });
    res.setHeader('Location', `${req.baseUrl}/scenario/${result.state.scenarioId}`);
    sendResult(res, 201, result, scenarioView(result.state));
  });

  const update = async (req: Request, res: Response) => {
    const principal = authorize(req, 'scenario', 'update');
    const { id: bodyId, ...settings } = validate(updateScenarioBody, req.body, 'body');
    const scenarioId = optionalId(req, 'scenarioId') ?? bodyId;
    if (scenarioId === undefined)
      throw new PlatformError(
        'validation_failed',
        'the scenario id is missing: PUT /scenario/{scenarioId} or a body "id"',
      );
    if (bodyId !== undefined && bodyId !== scenarioId)
      throw new PlatformError(
        'validation_failed',
        `the body id ${bodyId} differs from the path id ${scenarioId}`,
      );
    const result = await updateScenario(
      deps,
      callerOf(req, principal),
      scenarioId,
      settings,
      preconditions(req),
    );
    sendResult(res, 200, result, scenarioView(result.state));
  };
  mount(router, SCENARIO_OPERATIONS.update, update);
  mount(router, SCENARIO_OPERATIONS.updateById, update);

  async function change(req: Request, res: Response, command: ScenarioCommand) {
    const principal = authorize(req, 'scenario', 'update');
    const scenarioId = idParam(req, 'scenarioId');
    const result = await changeScenario(
      deps,
      callerOf(req, principal),
      scenarioId,
      command,
      preconditions(req),
    );
    sendResult(res, 200, result, scenarioView(result.state));
  }
  mount(router, activateScenario, (req, res) => change(req, res, { kind: 'ActivateScenario' }));
  mount(router, deactivateScenario, (req, res) =>
    change(req, res, { kind: 'DeactivateScenario', reason: 'deactivated by its owner' }),
  );

  mount(router, SCENARIO_OPERATIONS.delete, async (req, res) => {
    const principal = authorize(req, 'scenario', 'delete');
    const scenarioId = idParam(req, 'scenarioId');
    const result = await deleteScenario(deps, callerOf(req, principal), scenarioId, preconditions(req));
    sendResult(res, 200, result, { id: scenarioId, deleted: true });
  });

  mount(router, importScenarioOperation, async (req, res) => {
    const principal = authorize(req, 'scenario', 'create');
    const body = validate(importScenarioBody, req.body, 'body');
    const { result, hook } = await importScenario(deps, callerOf(req, principal), body, {
      key: idempotencyKey(req),
      hash: requestHash('POST', '/scenario/import', body),
    });
    res.setHeader('Location', `${req.baseUrl}/scenario/${result.state.scenarioId}`);
    sendResult(res, 201, result, {
      scenario: scenarioView(result.state),
      webhook: hook && webhookView(hook.state, deps.hooks, deps.hooks.now()),
    });
  });
}
