import type { z } from 'zod';
import { createRecordBody, updateRecordBody } from '../contracts/api/records';
import { userMay, type Operation } from '../contracts/auth';
import type { Actor } from '../contracts/events/envelope';
import { fieldsByKey, hookFileSchema, type MappedValue } from '../contracts/integrator';
import { streamName } from '../contracts/streams';
import { issuesOf } from '../contracts/validation';
import { attributesDecider, LABEL } from '../command-api/kit/attributes';
import { recordDecider, type RecordCommand } from '../command-api/records/domain/record';
import { userDecider } from '../command-api/identity/domain/user';
import type { CommandContext, CommandHandler } from '../command-api/kit/handler';
import type { IdAllocator } from '../command-api/kit/id-allocator';
import { requestHash, type IdempotencyKeys } from '../command-api/kit/idempotency';
import { recordResource } from '../command-api/records/routes/records';
import { moduleFields } from '../command-api/structure/commands';
import { storeUpload } from '../command-api/records/routes/files';
import type { UploadLimits } from '../command-api/deps';
import type { BlobStore } from '../infra/blob-store/port';
import type { ReadModels } from '../infra/read-store/read-models';
import { searchRecords } from '../query-api/records/search';
import { mapValue, StepFailure, type RecordStep, type StepScope } from './steps';

export interface RecordStepDeps {
  readonly handler: CommandHandler;
  readonly ids: IdAllocator;
  readonly idempotency: IdempotencyKeys;
  /** Where a search step looks, as the query API does. */
  readonly readModels: ReadModels;
  /** Received files, and the files records are given. */
  readonly blobs: BlobStore;
  readonly uploads: UploadLimits;
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

const labelDecider = attributesDecider(LABEL);

/**
 * The record steps: each is a command on the record, as the API would make it (the same validation), with the
 * scenario as the actor and its owner's rights — a step cannot do what its owner could not. Each command is
 * named by the run and operation, so a run resumed after a crash does not do it twice.
 */
export class RecordSteps {
  private readonly records: ReturnType<typeof recordResource>;

  constructor(private readonly deps: RecordStepDeps) {
    this.records = recordResource(deps.handler);
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
        const command = await this.records.prepareUpdate(body, at.tenant, recordId);
        return this.change(at, recordId, command);
      }
      case 'getRecord': {
        await this.ownerMay(at, 'record', 'read');
        const recordId = idOf('recordId', await evaluate(step.recordId));
        const record = await this.deps.handler.load(streamName('record', at.tenant, recordId), recordDecider);
        if (record.state.status !== 'active') throw new StepFailure(`record ${recordId} not found`);
        return this.records.view(record.state);
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
        await this.change(at, recordId, { kind: 'DeleteRecord' });
        return { recordId, deleted: true };
      }
      case 'addRecordLabel':
      case 'removeRecordLabel': {
        await this.ownerMay(at, 'record', 'update');
        const recordId = idOf('recordId', await evaluate(step.recordId));
        const labelId = idOf('labelId', await evaluate(step.labelId));
        let command: RecordCommand;
        if (step.kind === 'addRecordLabel') {
          // As through the API: attaching a label reads it.
          await this.ownerMay(at, 'label', 'read');
          const label = await this.deps.handler.load(streamName('label', at.tenant, labelId), labelDecider);
          command = { kind: 'LabelRecord', labelId, labelExists: label.state.status === 'active' };
        } else command = { kind: 'UnlabelRecord', labelId };
        const view = await this.change(at, recordId, command);
        return { recordId, labelIds: view.labelIds };
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
    const stream = streamName('record', at.tenant, recordId);
    const record = await this.deps.handler.load(stream, recordDecider);
    if (record.state.status !== 'active') throw new StepFailure(`record ${recordId} not found`);
    const schema = (await moduleFields(this.deps.handler, at.tenant, record.state.moduleId))?.fields ?? [];
    const identity = await this.deps.idempotency.identify(
      at.tenant,
      `scenario:${at.scenarioId}`,
      `run:${at.scope.runId}:${at.operation}`,
      () => requestHash('POST', `/record/${recordId}/file`, { blobKey: file.blobKey, fieldId }),
      () => this.deps.ids.next(at.tenant, 'file'),
    );
    const fileId = identity.entityId!;
    const content = await this.deps.blobs.get(file.blobKey);
    if (!content) throw new StepFailure(`the received file ${file.name} is no longer stored`);
    const upload = await storeUpload(this.deps, at.tenant, {
      name: file.name,
      contentType: file.mime,
      content,
    });
    const dropCopy = () => this.deps.blobs.delete(upload.blobKey).catch(() => undefined);
    let result;
    try {
      result = await this.deps.handler.handle(
        stream,
        recordDecider,
        { kind: 'AttachFile', file: { ...upload, fileId }, fieldId, schema },
        { ...this.contextOf(at), commandId: identity.commandId },
        identity.mayBeRepeat ? { mayBeRepeat: true } : {},
      );
    } catch (error) {
      await dropCopy();
      throw error;
    }
    const attached = result.state.files.find((candidate) => candidate.fileId === fileId);
    // A repeat: the first attempt's copy stands.
    if (result.replayed || attached?.blobKey !== upload.blobKey) await dropCopy();
    if (!attached) throw new StepFailure(`file ${fileId} was removed from record ${recordId} since`);
    return { recordId, fileId, name: attached.name, contentType: attached.contentType, size: attached.size };
  }

  private async create(at: RecordStepAt, mapped: Record<string, unknown>): Promise<{ recordId: number }> {
    const body = parsed(createRecordBody, mapped);
    const commandFor = await this.records.prepareCreate(body, at.tenant);
    const { runId } = at.scope;
    const identity = await this.deps.idempotency.identify(
      at.tenant,
      `scenario:${at.scenarioId}`,
      `run:${runId}:${at.operation}`,
      () => requestHash('POST', '/record', body),
      () => this.deps.ids.next(at.tenant, 'record'),
    );
    const recordId = identity.entityId!;
    await this.deps.handler.handle(
      streamName('record', at.tenant, recordId),
      recordDecider,
      commandFor(recordId),
      { ...this.contextOf(at), commandId: identity.commandId },
      identity.mayBeRepeat ? { mayBeRepeat: true } : { newStream: true },
    );
    return { recordId };
  }

  /** A command on an existing record; the record as it is after it. */
  private async change(
    at: RecordStepAt,
    recordId: number,
    command: RecordCommand,
  ): Promise<Record<string, unknown>> {
    const result = await this.deps.handler.handle(
      streamName('record', at.tenant, recordId),
      recordDecider,
      command,
      { ...this.contextOf(at), commandId: `${at.scope.runId}:operation:${at.operation}` },
      { mayBeRepeat: true },
    );
    return this.records.view(result.state);
  }

  private contextOf(at: RecordStepAt): Omit<CommandContext, 'commandId'> {
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
