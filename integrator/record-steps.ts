import type { z } from 'zod';
import { createRecordBody, updateRecordBody } from '../contracts/api/records';
import { userMay, type Operation } from '../contracts/auth';
import type { Actor } from '../contracts/events/envelope';
import { fieldsByKey, hookFileSchema, type MappedValue } from '../contracts/integrator';
import { streamName } from '../contracts/streams';
import { issuesOf } from '../contracts/validation';
import { recordDecider } from '../command-api/records/domain/record';
import { userDecider } from '../command-api/identity/domain/user';
import { withCommandId, type CommandContext, type CommandOrigin } from '../command-api/kit/handler';
import { requestHash } from '../command-api/kit/idempotency';
import {
  recordCommands,
  recordView,
  type RecordCommandDeps,
  type RecordCommands,
} from '../command-api/records/commands';
import { moduleFields } from '../command-api/structure/commands';
import type { ReadModels } from '../infra/read-store/read-models';
import { searchRecords } from '../query-api/records/search';
import { mapValue, StepFailure, type RecordStep, type StepScope } from './steps';

/** What the record commands need (`blobs`: received files, and records' files), and the read models. */
export interface RecordStepDeps extends RecordCommandDeps {
  /** Where a search step looks, as the query API does. */
  readonly readModels: ReadModels;
}

/** A file a hook received, as the bundle refers to it (its stored form without the form field). */
const receivedFile = hookFileSchema.omit({ field: true });

/** The operation of a run a record step is: where it acts, for whom, and under which command id. */
export interface RecordStepAt {
  readonly tenant: string;
  readonly scenarioId: number;
  /** The scenario's owner, whose rights bound the step (null: a scenario made before owners were kept). */
  readonly ownerId: number | null;
  /** The operation's number in its run: with the run id, the command's identity, so a replay is a repeat. */
  readonly operation: number;
  readonly scope: StepScope;
}

/**
 * The record steps: each is one of the record commands the API runs (the same validation), with the scenario
 * as the actor and its owner's rights — a step cannot do what its owner could not. Each command is named by
 * the run and operation, so a run resumed after a crash does not do it twice.
 */
export class RecordSteps {
  private readonly records: RecordCommands;

  constructor(private readonly deps: RecordStepDeps) {
    this.records = recordCommands(deps);
  }

  async run(step: RecordStep, at: RecordStepAt): Promise<unknown> {
    const evaluate = (value: MappedValue | undefined) => mapValue(at.scope, value);
    switch (step.kind) {
      case 'createRecord': {
        await this.ownerMay(at, 'record', 'create');
        return this.create(at, {
          moduleId: step.moduleId,
          ...(step.name !== undefined && { name: await evaluate(step.name) }),
          ...(step.fields !== undefined && {
            fields: await this.mapFields(at, step.moduleId, step.fields, evaluate),
          }),
        });
      }
      case 'updateRecord': {
        await this.ownerMay(at, 'record', 'update');
        const recordId = idOf('recordId', await evaluate(step.recordId));
        const body = parsed(updateRecordBody, {
          ...(step.name !== undefined && { name: await evaluate(step.name) }),
          ...(step.fields !== undefined && {
            fields: await this.mapFields(at, await this.moduleOf(at, recordId), step.fields, evaluate),
          }),
        });
        const result = await this.records.update(this.contextOf(at), recordId, body, { mayBeRepeat: true });
        return recordView(result.state);
      }
      case 'getRecord': {
        await this.ownerMay(at, 'record', 'read');
        const recordId = idOf('recordId', await evaluate(step.recordId));
        const record = await this.deps.handler.load(streamName('record', at.tenant, recordId), recordDecider);
        if (record.state.status !== 'active') throw new StepFailure(`record ${recordId} not found`);
        return recordView(record.state);
      }
      case 'searchRecords': {
        await this.ownerMay(at, 'record', 'read');
        const filter = await evaluate(step.filter);
        const order = await evaluate(step.order);
        for (const [name, value] of [
          ['filter', filter],
          ['order', order],
        ] as const)
          if (value !== undefined && value !== null && typeof value !== 'string')
            throw new StepFailure(
              `the ${name} must be text in the list language, got ${JSON.stringify(value)}`,
            );
        return searchRecords({ readModels: this.deps.readModels }, at.tenant, {
          ...(typeof filter === 'string' && { filter }),
          ...(typeof order === 'string' && { order }),
          limit: step.limit,
          ...(step.moduleId !== undefined && { moduleId: step.moduleId }),
        });
      }
      case 'attachRecordFile': {
        await this.ownerMay(at, 'record', 'update');
        const recordId = idOf('recordId', await evaluate(step.recordId));
        const reference = receivedFile.safeParse(await evaluate(step.file));
        // Only a file this system received: its key is in the system's part of the store.
        if (!reference.success || !reference.data.blobKey.startsWith(`${at.tenant}/`))
          throw new StepFailure(
            'the file must be one a hook of this system received: {name, mime, size, blobKey}',
          );
        return this.attach(at, recordId, reference.data, step.fieldId ?? null);
      }
      case 'deleteRecord': {
        await this.ownerMay(at, 'record', 'delete');
        const recordId = idOf('recordId', await evaluate(step.recordId));
        await this.records.delete(this.contextOf(at), recordId, { mayBeRepeat: true });
        return { recordId, deleted: true };
      }
      case 'addRecordLabel':
      case 'removeRecordLabel': {
        await this.ownerMay(at, 'record', 'update');
        const recordId = idOf('recordId', await evaluate(step.recordId));
        const labelId = idOf('labelId', await evaluate(step.labelId));
        let result;
        if (step.kind === 'addRecordLabel') {
          // As through the API: attaching a label reads it.
          await this.ownerMay(at, 'label', 'read');
          result = await this.records.label(this.contextOf(at), recordId, labelId, { mayBeRepeat: true });
        } else
          result = await this.records.unlabel(this.contextOf(at), recordId, labelId, { mayBeRepeat: true });
        return { recordId, labelIds: recordView(result.state).labelIds };
      }
    }
  }

  /** Copies a received file into the record's files, as an upload would be checked and stored. */
  private async attach(
    at: RecordStepAt,
    recordId: number,
    file: z.infer<typeof receivedFile>,
    fieldId: number | null,
  ): Promise<Record<string, unknown>> {
    const { attached } = await this.records.attachFile(
      this.originOf(at),
      {
        ...this.claimOf(at),
        requestHash: () =>
          requestHash('POST', `/record/${recordId}/file`, { blobKey: file.blobKey, fieldId }),
      },
      recordId,
      fieldId,
      async (store) => {
        const content = await this.deps.blobs.get(file.blobKey);
        if (!content) throw new StepFailure(`the received file ${file.name} is no longer stored`);
        return store({ name: file.name, contentType: file.mime, content });
      },
    );
    return {
      recordId,
      fileId: attached.fileId,
      name: attached.name,
      contentType: attached.contentType,
      size: attached.size,
    };
  }

  private async create(at: RecordStepAt, mapped: Record<string, unknown>): Promise<{ recordId: number }> {
    const { id } = await this.records.create(
      this.originOf(at),
      this.claimOf(at),
      parsed(createRecordBody, mapped),
    );
    return { recordId: id };
  }

  /** A create's claim: the scenario, under the run and operation, so a repeat of the step is recognised. */
  private claimOf(at: RecordStepAt): { holder: string; key: string } {
    return { holder: `scenario:${at.scenarioId}`, key: `run:${at.scope.runId}:${at.operation}` };
  }

  /** The context of a command on an existing record: named by the run and operation. */
  private contextOf(at: RecordStepAt): CommandContext {
    return withCommandId(this.originOf(at), `${at.scope.runId}:operation:${at.operation}`);
  }

  private originOf(at: RecordStepAt): CommandOrigin {
    return {
      tenant: at.tenant,
      actor: scenarioActor(at.scenarioId, at.ownerId),
      correlationId: at.scope.runId,
      causationId: at.scope.runId,
    };
  }

  /** The module of a record (null when the record is missing: the command then answers that). */
  private async moduleOf(at: RecordStepAt, recordId: number): Promise<number | null> {
    const record = await this.deps.handler.load(streamName('record', at.tenant, recordId), recordDecider);
    return record.state.status === 'active' ? record.state.moduleId : null;
  }

  /**
   * A step's field values, named by field id or key, by field key as a record body takes them (the module's
   * fields as they are now). Without a module the names stay: the command then answers what is missing.
   */
  private async mapFields(
    at: RecordStepAt,
    moduleId: number | null,
    fields: Readonly<Record<string, MappedValue>>,
    evaluate: (value: MappedValue) => Promise<unknown>,
  ): Promise<Record<string, unknown>> {
    const module = moduleId === null ? null : await moduleFields(this.deps.handler, at.tenant, moduleId);
    let named: Readonly<Record<string, MappedValue>> = fields;
    if (module) {
      const keyed = fieldsByKey(fields, module.fields);
      if ('problems' in keyed)
        throw new StepFailure(
          `the step's fields do not fit module ${moduleId}: ${keyed.problems
            .map((problem) => `${problem.path}: ${problem.message}`)
            .join('; ')}`,
        );
      named = keyed.values;
    }
    const mapped: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(named)) mapped[key] = await evaluate(value);
    return mapped;
  }

  /** The owner's rights now (from the user's own stream: a right taken away a moment ago counts). */
  private async ownerMay(at: RecordStepAt, module: string, operation: Operation): Promise<void> {
    if (at.ownerId === null) return;
    const owner = (await this.deps.handler.load(streamName('user', at.tenant, at.ownerId), userDecider))
      .state;
    if (owner.status !== 'active')
      throw new StepFailure(`the scenario's owner (user ${at.ownerId}) is no longer active`);
    if (!userMay({ role: owner.role, permissions: owner.permissions ?? undefined }, module, operation))
      throw new StepFailure(`the scenario's owner (user ${at.ownerId}) may not ${operation} ${module}`);
  }
}

/** Who a scenario's commands are by: the scenario, for its owner. */
export function scenarioActor(scenarioId: number, ownerId: number | null): Actor {
  return { userId: ownerId === null ? null : String(ownerId), credentialId: `scenario:${scenarioId}` };
}

function idOf(name: string, value: unknown): number {
  const id = typeof value === 'string' && /^[1-9][0-9]{0,9}$/.test(value) ? Number(value) : value;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1 || id > 2_147_483_647)
    throw new StepFailure(`${name} must be a positive integer, got ${JSON.stringify(value) ?? 'nothing'}`);
  return id;
}

function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success)
    throw new StepFailure(
      `the mapped record is not valid: ${issuesOf(result.error)
        .map((issue) => `${issue.path}: ${issue.message}`)
        .join('; ')}`,
    );
  return result.data;
}
