import { z } from 'zod';
import { fieldKeySchema, fieldValueSchema, type RecordEvent } from '../../contracts/events/records';
import { streamName } from '../../contracts/streams';
import { moduleDecider } from '../domain/module';
import { recordDecider, type RecordCommand, type RecordState } from '../domain/record';
import type { CommandDeps } from '../deps';
import type { Resource } from './resource';

const MAX_FIELDS = 200;
const name = z.string().trim().min(1, 'must not be empty').max(500, 'must be at most 500 characters');
const fields = z
  .record(fieldKeySchema, fieldValueSchema)
  .refine((value) => Object.keys(value).length <= MAX_FIELDS, `at most ${MAX_FIELDS} fields per record`);

const createRecord = z.strictObject({
  moduleId: z.number().int().positive(),
  name,
  fields: fields.optional(),
});
const updateRecord = z.strictObject({
  id: z.number().int().positive().optional(),
  name: name.optional(),
  fields: fields.optional(),
});

export function recordResource(
  deps: CommandDeps,
): Resource<
  RecordState,
  RecordCommand,
  RecordEvent,
  z.infer<typeof createRecord>,
  z.infer<typeof updateRecord>
> {
  return {
    noun: 'record',
    idParam: 'recordId',
    decider: recordDecider,
    createBody: createRecord,
    updateBody: updateRecord,
    async prepareCreate(body, tenant) {
      const module = await deps.handler.load(streamName('module', tenant, body.moduleId), moduleDecider);
      const moduleSpaceId = module.state.status === 'active' ? module.state.spaceId : null;
      return (recordId) => ({
        kind: 'CreateRecord',
        recordId,
        moduleId: body.moduleId,
        moduleSpaceId,
        name: body.name,
        fields: body.fields ?? {},
      });
    },
    update: (body) => ({
      kind: 'UpdateRecord',
      ...(body.name !== undefined && { name: body.name }),
      ...(body.fields !== undefined && { fields: body.fields }),
    }),
    deleteCommand: { kind: 'DeleteRecord' },
    view: (state) => ({
      id: state.recordId,
      moduleId: state.moduleId,
      spaceId: state.spaceId,
      name: state.name,
      fields: state.fields,
    }),
  };
}
