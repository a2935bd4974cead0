import type { Router } from 'express';
import {
  generateField,
  generateFieldBody,
  generateFieldValue,
  generateModules,
  generateModulesBody,
} from '../../../contracts/api/ai';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { idParam } from '../../../infra/http/params';
import type { CommandDeps } from '../../deps';
import { authorize, callerOf, sendAt } from '../../kit/route-context';
import { generateValue, proposeField, proposeModules } from '../commands';

/**
 * Generation: modules and fields proposed for a purpose (answered as the JSON text of the bodies that create
 * them, checked against those operations' rules), and a value for a field. Every call is metered against the
 * system's AI token balance; an answer that is not what was asked is a 502, never guessed at.
 */
export function addAiGenerationRoutes(router: Router, deps: CommandDeps): void {
  mount(router, generateModules, async (req, res) => {
    const principal = authorize(req, 'module', 'create');
    const body = validate(generateModulesBody, req.body, 'body');
    const { proposal, position } = await proposeModules(deps, callerOf(req, principal), body.prompt);
    sendAt(res, 200, position, { result: JSON.stringify(proposal) });
  });

  mount(router, generateField, async (req, res) => {
    const principal = authorize(req, 'field', 'create');
    const body = validate(generateFieldBody, req.body, 'body');
    const { proposal, position } = await proposeField(deps, callerOf(req, principal), body);
    sendAt(res, 200, position, { result: JSON.stringify(proposal) });
  });

  mount(router, generateFieldValue, async (req, res) => {
    const principal = authorize(req, 'field', 'read');
    // A generated value spends the system's tokens, for a record value: the right to write records says so.
    authorize(req, 'record', 'update');
    const fieldId = idParam(req, 'fieldId');
    const query = validate(generateFieldValue.query, req.query, 'query');
    const { generated, position } = await generateValue(
      deps,
      callerOf(req, principal),
      fieldId,
      query.recordId,
    );
    sendAt(res, 200, position, generated);
  });
}
