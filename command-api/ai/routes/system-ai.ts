import type { Request, Router } from 'express';
import {
  clearSystemAi as clearSystemAiOperation,
  getSystemAi,
  setSystemAi as setSystemAiOperation,
  systemAiBody,
} from '../../../contracts/api/ai';
import { isAdmin } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { sendJson } from '../../../infra/http/respond';
import type { SystemModels } from '../system-models';
import type { CommandDeps } from '../../deps';
import type { SystemAiSettings } from '../domain/system-ai';
import { authorize, callerOf } from '../../kit/route-context';
import { clearSystemAi, existingSystem, setSystemAi } from '../commands';

/**
 * `/system/{system}/ai`: which model a system's AI features use. Operator administrators only — the platform
 * calls the address on the system's behalf, so no system may point it at an address of its choosing.
 */
export function addSystemAiRoutes(
  router: Router,
  deps: CommandDeps,
  models: SystemModels,
  deployment: { readonly baseUrl: string; readonly model: string; readonly timeoutMs: number } | null,
): void {
  const operator = (req: Request, operation: 'read' | 'update') => {
    const principal = authorize(req, 'system', operation);
    if (principal.tenant !== deps.operatorTenant || !isAdmin(principal))
      throw new PlatformError(
        'forbidden',
        "only administrators of the operator system choose a system's model",
      );
    return principal;
  };
  /** The system named in the path, which must exist (the operator's own, or one it set up). */
  const systemOf = (req: Request): Promise<string> => existingSystem(deps, String(req.params.system));
  const view = (system: string, settings: SystemAiSettings | null) => {
    if (settings !== null)
      return {
        system,
        source: 'system',
        baseUrl: settings.baseUrl,
        model: settings.model,
        hasApiKey: settings.sealedApiKey !== null,
        timeoutMs: settings.timeoutMs,
      };
    return deployment === null
      ? { system, source: 'none', baseUrl: null, model: null, hasApiKey: false, timeoutMs: null }
      : { system, source: 'deployment', ...deployment, hasApiKey: true };
  };

  mount(router, getSystemAi, async (req, res) => {
    operator(req, 'read');
    const system = await systemOf(req);
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, 200, view(system, await models.settingsOf(system)));
  });
  mount(router, setSystemAiOperation, async (req, res) => {
    const principal = operator(req, 'update');
    const system = await systemOf(req);
    const body = validate(systemAiBody, req.body, 'body');
    const result = await setSystemAi(deps, callerOf(req, principal), system, body);
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, 200, view(system, result.state));
  });
  mount(router, clearSystemAiOperation, async (req, res) => {
    const principal = operator(req, 'update');
    const system = await systemOf(req);
    const result = await clearSystemAi(deps, callerOf(req, principal), system);
    sendJson(res, 200, view(system, result.state));
  });
}
