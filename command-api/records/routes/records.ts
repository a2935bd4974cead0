import { hookKeySchema } from '../../../contracts/integrator';
import type { Router } from 'express';
import { PlatformError } from '../../../contracts/errors';
import { OutboundError } from '../../../infra/outbound/port';
import { fieldsOf } from '../../../infra/http/hook-request';
import type { z } from 'zod';
import {
  createRecord,
  createRecordBody,
  deleteRecord,
  pressRecordButton,
  restoreRecord,
  updateRecord,
  updateRecordBody,
  updateRecordById,
} from '../../../contracts/api/records';
import type { FieldValue, RecordEvent } from '../../../contracts/events/records';
import type { FieldDefinition } from '../../../contracts/fields';
import { streamName } from '../../../contracts/streams';
import { moduleFields } from '../../structure/commands';
import { relationIdsOf, type RelationTargets } from '../domain/field-values';
import { recordDecider, type RecordCommand, type RecordState } from '../domain/record';
import type { CommandDeps } from '../../deps';
import type { AggregateLoader } from '../../kit/handler';
import { idParam } from '../../../infra/http/params';
import { mount } from '../../../infra/http/operations';
import { authorize, commandContext, preconditions, sendResult } from '../../kit/route-context';
import type { Resource } from '../../kit/resource-routes';

/** The module of each record the relation values point at (null: no such record). */
async function relationTargets(
  aggregates: AggregateLoader,
  tenant: string,
  schema: readonly FieldDefinition[],
  values: Readonly<Record<string, FieldValue>>,
): Promise<RelationTargets> {
  const ids = relationIdsOf(schema, values);
  const targets = await Promise.all(
    ids.map(async (recordId) => {
      const target = await aggregates.load(streamName('record', tenant, recordId), recordDecider);
      return [recordId, target.state.status === 'active' ? target.state.moduleId : null] as const;
    }),
  );
  return new Map(targets);
}

function recordView(state: RecordState): Record<string, unknown> {
  return {
    id: state.recordId,
    moduleId: state.moduleId,
    spaceId: state.spaceId,
    name: state.name,
    fields: state.fields,
    labelIds: [...state.labelIds].sort((a, b) => a - b),
  };
}

export function recordResource(
  aggregates: AggregateLoader,
): Resource<
  RecordState,
  RecordCommand,
  RecordEvent,
  z.infer<typeof createRecordBody>,
  z.infer<typeof updateRecordBody>
> {
  return {
    noun: 'record',
    idParam: 'recordId',
    operations: {
      create: createRecord,
      update: updateRecord,
      updateById: updateRecordById,
      delete: deleteRecord,
    },
    decider: recordDecider,
    createBody: createRecordBody,
    updateBody: updateRecordBody,
    async prepareCreate(body, tenant) {
      const module = await moduleFields(aggregates, tenant, body.moduleId);
      const schema = module?.fields ?? [];
      const fields = body.fields ?? {};
      const relations = await relationTargets(aggregates, tenant, schema, fields);
      return (recordId) => ({
        kind: 'CreateRecord',
        recordId,
        moduleId: body.moduleId,
        moduleSpaceId: module?.spaceId ?? null,
        name: body.name,
        fields,
        schema,
        relations,
      });
    },
    async prepareUpdate(body, tenant, recordId) {
      const record = await aggregates.load(streamName('record', tenant, recordId), recordDecider);
      // A missing record has no module: the decider answers 404 before it looks at the schema.
      const module =
        record.state.status === 'active'
          ? await moduleFields(aggregates, tenant, record.state.moduleId)
          : null;
      const schema = module?.fields ?? [];
      return {
        kind: 'UpdateRecord',
        ...(body.name !== undefined && { name: body.name }),
        ...(body.fields !== undefined && { fields: body.fields }),
        schema,
        relations: await relationTargets(aggregates, tenant, schema, body.fields ?? {}),
      };
    },
    prepareDelete: async () => ({ kind: 'DeleteRecord' }),
    view: recordView,
  };
}

/** `POST /record/{recordId}/restore`: brings a soft-deleted record back, if its module still exists. */
export function addRecordRestoreRoute(router: Router, deps: CommandDeps): void {
  mount(router, restoreRecord, async (req, res) => {
    const principal = authorize(req, 'record', 'delete');
    const recordId = idParam(req, 'recordId');
    const stream = streamName('record', principal.tenant, recordId);
    const record = await deps.handler.load(stream, recordDecider);
    const module = await moduleFields(deps.handler, principal.tenant, record.state.moduleId);
    const result = await deps.handler.handle(
      stream,
      recordDecider,
      { kind: 'RestoreRecord', moduleActive: module !== null },
      commandContext(req, principal, deps.newCommandId()),
      preconditions(req),
    );
    sendResult(res, 200, result, recordView(result.state));
  });
}

/**
 * `POST /record/{recordId}/button/{fieldId}`: presses a button field. The button's webhook gets the record
 * (through the SSRF guard); what it answered is recorded as `ButtonPressed` and returned. A 2xx is `ok`;
 * another status is still a press (`ok: false`); no answer at all is a 502.
 */
export function addButtonRoute(router: Router, deps: CommandDeps): void {
  mount(router, pressRecordButton, async (req, res) => {
    const principal = authorize(req, 'record', 'update');
    const recordId = idParam(req, 'recordId');
    const fieldId = idParam(req, 'fieldId');
    const stream = streamName('record', principal.tenant, recordId);
    const record = await deps.handler.load(stream, recordDecider);
    if (record.state.status !== 'active')
      throw new PlatformError('not_found', `record ${recordId} not found`);
    const module = await moduleFields(deps.handler, principal.tenant, record.state.moduleId);
    const field = module?.fields.find((candidate) => candidate.fieldId === fieldId);
    if (!field) throw new PlatformError('not_found', `field ${fieldId} not found in the record's module`);
    if (field.type !== 'button')
      throw new PlatformError('validation_failed', `field ${fieldId} is not a button`);
    let outcome: { ok: boolean; status: number | null; durationMs: number; error?: string };
    let answerBody: string | null = null;
    const url = String(field.config.webhookUrl);
    const press = {
      event: 'button.pressed',
      system: principal.tenant,
      field: { id: field.fieldId, key: field.key, name: field.name },
      record: recordView(record.state),
      pressedBy: principal.userId,
      pressedAt: new Date().toISOString(),
    };
    try {
      const own = ownHookOf(url, deps.hooks.baseUrl);
      const started = performance.now();
      // One of this platform's hooks: delivered to it directly (the SSRF guard would refuse its address).
      const answer =
        own && deps.hooks.deliverJson
          ? await deps.hooks.deliverJson(own.key, press, own.query)
          : await deps.outbound.postJson(url, press);
      answerBody = answer.body;
      outcome = {
        ok: answer.status >= 200 && answer.status < 300,
        status: answer.status,
        durationMs: 'durationMs' in answer ? answer.durationMs : performance.now() - started,
      };
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      if (error.reason === 'refused-address' || error.reason === 'invalid-request')
        throw new PlatformError(
          'validation_failed',
          `the button's webhook address is not allowed: ${error.message}`,
        );
      outcome = { ok: false, status: null, durationMs: 0, error: error.message };
    }
    const result = await deps.handler.handle(
      stream,
      recordDecider,
      { kind: 'RecordButtonPress', fieldId, ...outcome },
      commandContext(req, principal, deps.newCommandId()),
    );
    if (outcome.status === null)
      throw new PlatformError(
        'upstream_failed',
        `the button's webhook did not answer: ${outcome.error ?? ''}`,
      );
    sendResult(res, 200, result, {
      recordId,
      fieldId,
      ok: outcome.ok,
      status: outcome.status,
      body: answerBody,
    });
  });
}

/** The hook id of `url` when it is one of this platform's hooks (`<HOOK_BASE_URL>/<id>`), with its query. */
function ownHookOf(
  url: string,
  hookBaseUrl: string,
): { key: string; query: Record<string, string | string[]> } | null {
  if (!URL.canParse(url) || !URL.canParse(hookBaseUrl)) return null;
  const target = new URL(url);
  const base = new URL(hookBaseUrl);
  const prefix = `${base.pathname.replace(/\/+$/, '')}/`;
  if (target.origin !== base.origin || !target.pathname.startsWith(prefix)) return null;
  const key = hookKeySchema.safeParse(target.pathname.slice(prefix.length));
  return key.success ? { key: key.data, query: fieldsOf(target.searchParams) } : null;
}
