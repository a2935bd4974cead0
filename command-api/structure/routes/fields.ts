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
import type { FieldDefinition } from '../../../contracts/fields';
import { mount } from '../../../infra/http/operations';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { idParam, optionalId } from '../../../infra/http/params';
import { fieldOf, moduleDecider, type ModuleCommand, type ModuleState } from '../domain/module';
import type { CommandDeps } from '../../deps';
import type { CommandResult } from '../../kit/handler';
import { requestHash } from '../../kit/idempotency';
import {
  authorize,
  commandContext,
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
  };
}

/**
 * Field definitions are commands on their module's stream (the module owns its record schema, so a record
 * is always checked against one consistent set of fields). `PUT`/`DELETE /field/{id}` find the module
 * through the fields read model.
 */
export function addFieldRoutes(router: Router, deps: CommandDeps): void {
  const moduleStream = (tenant: string, moduleId: number): string => streamName('module', tenant, moduleId);

  /** Whether the relation target of a config exists (the decider refuses a relation to nothing). */
  const relationTarget = async (tenant: string, fieldConfig: Record<string, unknown> | undefined) => {
    const target = fieldConfig?.moduleId;
    if (typeof target !== 'number' || !Number.isSafeInteger(target) || target <= 0) return {};
    const module = await deps.handler.load(moduleStream(tenant, target), moduleDecider);
    return { relationTargetExists: module.state.status === 'active' };
  };

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
    const module = await deps.handler.load(moduleStream(principal.tenant, body.moduleId), moduleDecider);
    if (module.state.status !== 'active')
      throw new PlatformError('validation_failed', `module ${body.moduleId} does not exist`, [
        { path: 'moduleId', message: 'no such module' },
      ]);
    const target = body.type === 'relation' ? await relationTarget(principal.tenant, body.config) : {};
    const identity = await deps.idempotency.identify(
      principal.tenant,
      principal.credential.id,
      idempotencyKey(req),
      () => requestHash('POST', '/field', body),
      () => deps.ids.next(principal.tenant, 'field'),
    );
    const fieldId = identity.entityId!;
    const command: ModuleCommand = {
      kind: 'AddField',
      fieldId,
      name: body.name,
      ...(body.key !== undefined && { key: body.key }),
      type: body.type,
      required: body.required ?? false,
      config: body.config ?? {},
      ...target,
    };
    const result = await deps.handler.handle(
      moduleStream(principal.tenant, body.moduleId),
      moduleDecider,
      command,
      commandContext(req, principal, identity.commandId),
      identity.mayBeRepeat ? { mayBeRepeat: true } : {},
    );
    res.setHeader('Location', `${req.baseUrl}/field/${fieldId}`);
    answer(res, 201, result, fieldId);
  });

  /** The module that holds field `fieldId`, or a 404. */
  const moduleOfField = async (tenant: string, fieldId: number): Promise<number> => {
    const moduleId = await deps.reads.fieldModule(tenant, fieldId);
    if (moduleId === null) throw new PlatformError('not_found', `field ${fieldId} not found`);
    return moduleId;
  };

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
    const moduleId = await moduleOfField(principal.tenant, fieldId);
    const result = await deps.handler.handle(
      moduleStream(principal.tenant, moduleId),
      moduleDecider,
      {
        kind: 'ChangeField',
        fieldId,
        ...(body.name !== undefined && { name: body.name }),
        ...(body.required !== undefined && { required: body.required }),
        ...(body.config !== undefined && { config: body.config }),
        ...(await relationTarget(principal.tenant, body.config)),
      },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    answer(res, 200, result, fieldId);
  };
  // `PUT /field/order/` is registered first: `order` is not a field id.
  const order = async (req: Request, res: Response): Promise<void> => {
    const principal = authorize(req, 'field', 'update');
    const body = validate(orderFieldsBody, req.body, 'body');
    const result = await deps.handler.handle(
      moduleStream(principal.tenant, body.moduleId),
      moduleDecider,
      { kind: 'OrderFields', fieldIds: body.fieldIds },
      commandContext(req, principal, deps.newCommandId()),
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
    const moduleId = await moduleOfField(principal.tenant, fieldId);
    const result = await deps.handler.handle(
      moduleStream(principal.tenant, moduleId),
      moduleDecider,
      { kind: 'RemoveField', fieldId },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, { id: fieldId, deleted: true });
  });
}
