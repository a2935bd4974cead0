import type { Request, Response, Router } from 'express';
import {
  createField,
  createFieldBody,
  deleteField,
  orderFields,
  orderFieldsBody,
  updateField,
  updateFieldBody,
  updateFieldById,
} from '../../../contracts/api/fields';
import { PlatformError } from '../../../contracts/errors';
import { isPersonalField, type FieldDefinition } from '../../../contracts/fields';
import { mount } from '../../../infra/http/operations';
import { validate } from '../../../contracts/validation';
import { idParam, optionalId } from '../../../infra/http/params';
import { fieldCommands } from '../commands';
import { fieldOf, type ModuleState } from '../domain/module';
import type { CommandDeps } from '../../deps';
import type { CommandResult } from '../../kit/handler';
import {
  authorize,
  commandContext,
  commandOrigin,
  idempotencyKey,
  preconditions,
  sendResult,
} from '../../kit/route-context';

/** The API shape of a field. */
export function fieldView(field: FieldDefinition, module: ModuleState): Record<string, unknown> {
  return {
    id: field.fieldId,
    moduleId: module.moduleId,
    spaceId: module.spaceId,
    key: field.key,
    name: field.name,
    type: field.type,
    required: field.required,
    config: field.config,
    position: field.position,
    builtIn: field.builtIn,
    personal: isPersonalField(field),
  };
}

/** `POST /field`, `PUT /field[/{fieldId}]`, `PUT /field/order`, `DELETE /field/{fieldId}`. */
export function addFieldRoutes(router: Router, deps: CommandDeps): void {
  const fields = fieldCommands(deps);

  const answer = (
    res: Response,
    status: number,
    result: CommandResult<ModuleState>,
    fieldId: number,
  ): void => {
    sendResult(res, status, result, fieldView(fieldOf(result.state, fieldId), result.state));
  };

  mount(router, createField, async (req, res) => {
    const principal = authorize(req, 'field', 'create');
    const body = validate(createFieldBody, req.body, 'body');
    const { fieldId, result } = await fields.add(
      commandOrigin(req, principal),
      { holder: principal.credential.id, key: idempotencyKey(req) },
      body,
    );
    res.setHeader('Location', `${req.baseUrl}/field/${fieldId}`);
    answer(res, 201, result, fieldId);
  });

  const update = async (req: Request, res: Response): Promise<void> => {
    const principal = authorize(req, 'field', 'update');
    const body = validate(updateFieldBody, req.body, 'body');
    const fieldId = optionalId(req, 'fieldId') ?? body.id;
    if (fieldId === undefined)
      throw new PlatformError(
        'validation_failed',
        'the field id is missing: PUT /field/{fieldId} or a body "id"',
      );
    if (body.id !== undefined && body.id !== fieldId)
      throw new PlatformError(
        'validation_failed',
        `the body id ${body.id} differs from the path id ${fieldId}`,
      );
    const result = await fields.change(
      commandContext(req, principal, deps.newCommandId()),
      fieldId,
      body,
      preconditions(req),
    );
    answer(res, 200, result, fieldId);
  };
  // `PUT /field/order/` is registered first: `order` is not a field id.
  const order = async (req: Request, res: Response): Promise<void> => {
    const principal = authorize(req, 'field', 'update');
    const body = validate(orderFieldsBody, req.body, 'body');
    const result = await fields.order(
      commandContext(req, principal, deps.newCommandId()),
      body,
      preconditions(req),
    );
    sendResult(res, 200, result, {
      moduleId: body.moduleId,
      items: result.state.fields.map((field) => fieldView(field, result.state)),
    });
  };
  mount(router, orderFields, order);
  mount(router, updateField, update);
  mount(router, updateFieldById, update);

  mount(router, deleteField, async (req, res) => {
    const principal = authorize(req, 'field', 'delete');
    const fieldId = idParam(req, 'fieldId');
    const result = await fields.remove(
      commandContext(req, principal, deps.newCommandId()),
      fieldId,
      preconditions(req),
    );
    sendResult(res, 200, result, { id: fieldId, deleted: true });
  });
}
