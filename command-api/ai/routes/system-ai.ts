import type { Request, Router } from 'express';
import { clearSystemAi, getSystemAi, setSystemAi, systemAiBody } from '../../../contracts/api/ai';
import { isAdmin } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import { isValidTenant, streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { sendJson } from '../../../infra/http/respond';
import type { SystemModels } from '../system-models';
import type { CommandDeps } from '../../deps';
import { systemAiDecider, type SystemAiSettings } from '../domain/system-ai';
import { tenantDecider } from '../../systems/domain/tenant';
import { authorize, commandContext } from '../../kit/route-context';

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
  const systemOf = async (req: Request): Promise<string> => {
    const system = String(req.params.system);
    if (!isValidTenant(system))
      throw new PlatformError('validation_failed', 'the system must be a system name (a DNS label)', [
        { path: 'system', message: 'not a system name' },
      ]);
    if (system === deps.operatorTenant) return system;
    const setUp = await deps.handler.load(streamName('tenant', deps.operatorTenant, system), tenantDecider);
    if (!setUp.state.provisioned) throw new PlatformError('not_found', `no system ${system}`);
    return system;
  };
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
  const stream = (system: string) => streamName('aiSettings', deps.operatorTenant, system);

  mount(router, getSystemAi, async (req, res) => {
    operator(req, 'read');
    const system = await systemOf(req);
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, 200, view(system, await models.settingsOf(system)));
  });
  mount(router, setSystemAi, async (req, res) => {
    const principal = operator(req, 'update');
    const system = await systemOf(req);
    const body = validate(systemAiBody, req.body, 'body');
    const result = await deps.handler.handle(
      stream(system),
      systemAiDecider,
      {
        kind: 'SetSystemAi',
        system,
        baseUrl: body.baseUrl,
        model: body.model,
        sealedApiKey: body.apiKey === undefined ? undefined : deps.sealer.seal(body.apiKey),
        timeoutMs: body.timeoutMs ?? null,
      },
      commandContext(req, principal, deps.newCommandId()),
    );
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, 200, view(system, result.state));
  });
  mount(router, clearSystemAi, async (req, res) => {
    const principal = operator(req, 'update');
    const system = await systemOf(req);
    const result = await deps.handler.handle(
      stream(system),
      systemAiDecider,
      { kind: 'ClearSystemAi', system },
      commandContext(req, principal, deps.newCommandId()),
    );
    sendJson(res, 200, view(system, result.state));
  });
}
