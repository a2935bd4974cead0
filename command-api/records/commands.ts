import type { z } from 'zod';
import type { createSegmentBody, updateSegmentBody } from '../../contracts/api/catalogue';
import { createRecordBody, updateRecordBody } from '../../contracts/api/records';
import { PlatformError } from '../../contracts/errors';
import type { FieldValue, RecordEvent } from '../../contracts/events/records';
import type { FieldDefinition } from '../../contracts/fields';
import { contentMatchesType, fileNameSchema, mediaTypeOf } from '../../contracts/files';
import { hookKeySchema } from '../../contracts/integrator';
import { childId } from '../../contracts/ids';
import { remoteKey } from '../../contracts/remote-keys';
import { streamName } from '../../contracts/streams';
import { validate } from '../../contracts/validation';
import { BlobTooLargeError, newBlobKey } from '../../infra/blob-store/port';
import { fieldsOf } from '../../infra/http/hook-request';
import type { IncomingFile } from '../../infra/http/upload';
import { OutboundError } from '../../infra/outbound/port';
import type { CommandDeps } from '../deps';
import { attributesDecider, LABEL, SEGMENT } from '../kit/attributes';
import type { AttributesChecks } from '../kit/attributes-resource';
import { deleteBlobs } from '../kit/blobs';
import {
  withCommandId,
  loadingEachStreamOnce,
  type AggregateLoader,
  type CommandContext,
  type CommandHandler,
  type CommandOrigin,
  type CommandResult,
  type HandleOptions,
  type NewStreamCommand,
} from '../kit/handler';
import { requestHash } from '../kit/idempotency';
import { resourceCommands, type CreateClaim, type ResourceCommandSpec } from '../kit/resource-commands';
import { resolveRecordListTexts, type NamedRecordFields } from '../../languages/filter/record-fields';
import { moduleFields } from '../structure/commands';
import { spaceDecider } from '../structure/domain/space';
import { relationIdsOf, type RelationTargets } from './domain/field-values';
import {
  recordDecider,
  type AttachedFile,
  type RecordCommand,
  type RecordState,
  type UploadedFile,
} from './domain/record';
import { remoteLinkDecider, type RemoteLinkState } from './domain/remote-link';

export type CreateRecordBody = z.infer<typeof createRecordBody>;
export type UpdateRecordBody = z.infer<typeof updateRecordBody>;

/** What the record commands need. */
export type RecordCommandDeps = Pick<
  CommandDeps,
  'handler' | 'ids' | 'idempotency' | 'blobs' | 'uploads' | 'logger'
>;

const labelDecider = attributesDecider(LABEL);

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

/** A record as the API shows it. */
export function recordView(state: RecordState): Record<string, unknown> {
  return {
    id: state.recordId,
    moduleId: state.moduleId,
    spaceId: state.spaceId,
    name: state.name,
    fields: state.fields,
    labelIds: [...state.labelIds].sort((a, b) => a - b),
  };
}

/** How a record's create, update and delete are prepared: values checked against the module's fields. */
export function recordCommandSpec(
  aggregates: AggregateLoader,
): ResourceCommandSpec<RecordState, RecordCommand, RecordEvent, CreateRecordBody, UpdateRecordBody> {
  return {
    noun: 'record',
    decider: recordDecider,
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

/** A file in the blob store, not yet attached. */
export type StoredUpload = Omit<UploadedFile, 'fileId'>;

/**
 * Checks the declared type, streams the bytes into the blob store within the size limit, then checks that the
 * bytes agree with the declared type. A refused file leaves nothing in the store.
 */
export async function storeUpload(
  deps: Pick<CommandDeps, 'blobs' | 'uploads'>,
  tenant: string,
  file: IncomingFile,
): Promise<StoredUpload> {
  const contentType = mediaTypeOf(file.contentType);
  if (!deps.uploads.contentTypes.has(contentType))
    throw new PlatformError(
      'unsupported_media_type',
      `files of type ${JSON.stringify(contentType)} are not accepted; accepted types: ${[...deps.uploads.contentTypes].join(', ')}`,
    );
  if (file.name === '')
    throw new PlatformError(
      'validation_failed',
      'the file needs a name: a multipart filename or the "name" query parameter',
    );
  const name = validate(fileNameSchema, file.name, 'file name');
  const blobKey = newBlobKey(tenant);
  let stored;
  try {
    stored = await deps.blobs.put(blobKey, file.content, deps.uploads.maxBytes);
  } catch (error) {
    if (error instanceof BlobTooLargeError)
      throw new PlatformError('payload_too_large', `files are at most ${deps.uploads.maxBytes} bytes`);
    throw error;
  }
  if (!contentMatchesType(contentType, stored.head)) {
    await deps.blobs.delete(blobKey);
    throw new PlatformError('unsupported_media_type', `the content of the file is not ${contentType}`);
  }
  return { name, contentType, size: stored.size, sha256: stored.sha256, blobKey };
}

/**
 * How an attach gets its file, once the record was found and the file's id claimed: `store` checks and stores
 * one file; `discard` undoes a store the caller cannot use after all (a malformed request after the file).
 */
export type ReceiveUpload = (
  store: (file: IncomingFile) => Promise<StoredUpload>,
  discard: (upload: StoredUpload) => Promise<void>,
) => Promise<StoredUpload>;

/** What a button's webhook answered (`status` null: it did not answer). */
export interface ButtonPress {
  readonly ok: boolean;
  readonly status: number | null;
  readonly body: string | null;
}

/** One item of a bulk command: its record and result, or the `PlatformError` that refused it. */
export type ItemOutcome =
  | { readonly ok: true; readonly id: number; readonly result: CommandResult<unknown> }
  | { readonly ok: false; readonly error: PlatformError };

/**
 * Items of an update, delete or repeated create decided at once: their appends share group commits without
 * holding a whole request in flight.
 */
const CONCURRENT_ITEMS = 100;

/** An item's failure: a `PlatformError` fails the item alone, any other error the whole bulk command. */
function failedItem(error: unknown): ItemOutcome {
  if (!(error instanceof PlatformError)) throw error;
  return { ok: false, error };
}

/** Runs `count` items, `CONCURRENT_ITEMS` at a time; one outcome per item, in order. */
async function runItems(
  count: number,
  runItem: (index: number) => Promise<{ id: number; result: CommandResult<unknown> }>,
): Promise<ItemOutcome[]> {
  const outcomes: ItemOutcome[] = [];
  for (let start = 0; start < count; start += CONCURRENT_ITEMS) {
    const chunk = Array.from(
      { length: Math.min(CONCURRENT_ITEMS, count - start) },
      (_, offset) => start + offset,
    );
    outcomes.push(
      ...(await Promise.all(
        chunk.map(async (index): Promise<ItemOutcome> => {
          try {
            return { ok: true, ...(await runItem(index)) };
          } catch (error) {
            return failedItem(error);
          }
        }),
      )),
    );
  }
  return outcomes;
}

/**
 * Writes one field's value as a job computed it (an AI transform), checked against the fields the job was
 * computed for rather than the module's fields now; the job's command id makes a repeat a no-op.
 */
export function writeComputedValue(
  handler: CommandHandler,
  context: CommandContext,
  recordId: number,
  computed: {
    readonly fieldKey: string;
    readonly value: FieldValue;
    readonly schema: readonly FieldDefinition[];
  },
): Promise<CommandResult<RecordState>> {
  return handler.handle(
    streamName('record', context.tenant, recordId),
    recordDecider,
    {
      kind: 'UpdateRecord',
      fields: { [computed.fieldKey]: computed.value },
      schema: computed.schema,
      relations: new Map(),
    },
    context,
    { mayBeRepeat: true },
  );
}

/**
 * The commands on records, their files, labels and remote links: each loads what it depends on, decides and
 * appends. The routes, scenario steps and bulk requests all run them, so a write is checked and recorded the
 * same way whoever asks.
 */
export function recordCommands(deps: RecordCommandDeps) {
  const spec = recordCommandSpec(deps.handler);
  const resource = resourceCommands(deps, spec);
  const streamOf = (tenant: string, recordId: number) => streamName('record', tenant, recordId);

  /** A blob no event points at any more (or ever did): removing it may fail without failing the command. */
  const dropBlob = (blobKey: string): Promise<void> =>
    deleteBlobs(deps, [blobKey], 'could not remove an unused blob; it stays as an orphan');

  /** The fields of the record's module as they are now (none when the record or its module is gone). */
  const schemaOf = async (tenant: string, record: RecordState): Promise<readonly FieldDefinition[]> =>
    (await moduleFields(deps.handler, tenant, record.moduleId))?.fields ?? [];

  return {
    create: (origin: CommandOrigin, claim: CreateClaim, body: CreateRecordBody) =>
      resource.create(origin, claim, body),
    update: resource.update,
    delete: resource.delete,

    /** Brings a soft-deleted record back, if its module still exists. */
    async restore(
      context: CommandContext,
      recordId: number,
      options: HandleOptions = {},
    ): Promise<CommandResult<RecordState>> {
      const stream = streamOf(context.tenant, recordId);
      const record = await deps.handler.load(stream, recordDecider);
      const module = await moduleFields(deps.handler, context.tenant, record.state.moduleId);
      return deps.handler.handle(
        stream,
        recordDecider,
        { kind: 'RestoreRecord', moduleActive: module !== null },
        context,
        options,
      );
    },

    /** Attaches a label of the record's system. */
    async label(
      context: CommandContext,
      recordId: number,
      labelId: number,
      options: HandleOptions = {},
    ): Promise<CommandResult<RecordState>> {
      const label = await deps.handler.load(streamName('label', context.tenant, labelId), labelDecider);
      return deps.handler.handle(
        streamOf(context.tenant, recordId),
        recordDecider,
        { kind: 'LabelRecord', labelId, labelExists: label.state.status === 'active' },
        context,
        options,
      );
    },

    unlabel(
      context: CommandContext,
      recordId: number,
      labelId: number,
      options: HandleOptions = {},
    ): Promise<CommandResult<RecordState>> {
      return deps.handler.handle(
        streamOf(context.tenant, recordId),
        recordDecider,
        { kind: 'UnlabelRecord', labelId },
        context,
        options,
      );
    },

    /**
     * Attaches a file: refused before a byte is stored when the record is missing, then the file's id is
     * claimed (`claim`, with the hash of what the caller asked), the file received and stored, and attached.
     * A refused attach, or a repeat of an attach made before, leaves no copy of the bytes behind.
     */
    async attachFile(
      origin: CommandOrigin,
      claim: CreateClaim & { readonly requestHash: () => string },
      recordId: number,
      fieldId: number | null,
      receive: ReceiveUpload,
    ): Promise<{ result: CommandResult<RecordState>; attached: AttachedFile }> {
      const stream = streamOf(origin.tenant, recordId);
      const record = await deps.handler.load(stream, recordDecider);
      if (record.state.status !== 'active')
        throw new PlatformError('not_found', `record ${recordId} not found`);
      const schema = await schemaOf(origin.tenant, record.state);
      const identity = await deps.idempotency.identify(
        origin.tenant,
        claim.holder,
        claim.key,
        claim.requestHash,
        () => deps.ids.next(origin.tenant, 'file'),
      );
      const fileId = identity.entityId!;
      const upload = await receive(
        (file) => storeUpload(deps, origin.tenant, file),
        (stored) => dropBlob(stored.blobKey),
      );
      let result;
      try {
        result = await deps.handler.handle(
          stream,
          recordDecider,
          { kind: 'AttachFile', file: { ...upload, fileId }, fieldId, schema },
          withCommandId(origin, identity.commandId),
          identity.mayBeRepeat ? { mayBeRepeat: true } : {},
        );
      } catch (error) {
        await dropBlob(upload.blobKey);
        throw error;
      }
      const attached = result.state.files.find((file) => file.fileId === fileId);
      if (result.replayed || attached?.blobKey !== upload.blobKey) {
        // A repeated attach: the first one's file stands, this copy of the bytes is not needed.
        await dropBlob(upload.blobKey);
        if (attached && attached.sha256 !== upload.sha256)
          throw new PlatformError('idempotency_key_reused', 'this Idempotency-Key was used for another file');
      }
      if (!attached)
        throw new PlatformError('conflict', `file ${fileId} was removed from record ${recordId} since`);
      return { result, attached };
    },

    /**
     * Removes a file; its bytes go after the event: a crash in between leaves an orphan blob, never a file
     * without its bytes.
     */
    async detachFile(
      context: CommandContext,
      recordId: number,
      fileId: number,
      options: HandleOptions = {},
    ): Promise<CommandResult<RecordState>> {
      const stream = streamOf(context.tenant, recordId);
      const record = await deps.handler.load(stream, recordDecider);
      const schema = record.state.status === 'active' ? await schemaOf(context.tenant, record.state) : [];
      const result = await deps.handler.handle(
        stream,
        recordDecider,
        { kind: 'DetachFile', fileId, schema },
        context,
        options,
      );
      const detached = record.state.files.find((file) => file.fileId === fileId);
      if (detached) await dropBlob(detached.blobKey);
      return result;
    },

    setFileWeights(
      context: CommandContext,
      recordId: number,
      weights: Extract<RecordCommand, { kind: 'SetFileWeights' }>['weights'],
      options: HandleOptions = {},
    ): Promise<CommandResult<RecordState>> {
      return deps.handler.handle(
        streamOf(context.tenant, recordId),
        recordDecider,
        { kind: 'SetFileWeights', weights },
        context,
        options,
      );
    },

    /** Links (or moves) another application's key to a record. */
    async linkRemote(
      context: CommandContext,
      remoteApplication: string,
      remoteId: string,
      recordId: number,
    ): Promise<CommandResult<RemoteLinkState>> {
      const record = await deps.handler.load(streamOf(context.tenant, recordId), recordDecider);
      return deps.handler.handle(
        streamName('remote', context.tenant, remoteKey(remoteApplication, remoteId)),
        remoteLinkDecider,
        {
          kind: 'LinkRemote',
          remoteApplication,
          remoteId,
          recordId,
          recordExists: record.state.status === 'active',
        },
        context,
      );
    },

    /**
     * Creates records, each item its own command (an item that fails writes nothing and does not stop the
     * others). Each item is checked here, as `POST /record` checks its body: a bad item fails alone.
     */
    async createMany(
      origin: CommandOrigin,
      claim: CreateClaim,
      items: readonly unknown[],
    ): Promise<ItemOutcome[]> {
      const { tenant } = origin;
      const identity = await deps.idempotency.identifyBulk(
        tenant,
        claim.holder,
        claim.key,
        () => requestHash('POST', '/record/bulk', { items }),
        items.length,
        () => deps.ids.next(tenant, 'record'),
      );
      const itemContext = (index: number) => ({
        ...origin,
        commandId: childId(identity.commandId, `:${index}`),
      });
      if (identity.mayBeRepeat)
        // A repeated key: each item looks for the events of its first run before deciding again.
        return runItems(items.length, async (index) => {
          const item = validate(createRecordBody, items[index], `item ${index}`);
          const id = identity.entityIds[index]!;
          const command = (await spec.prepareCreate(item, tenant))(id);
          const result = await deps.handler.handle(
            streamOf(tenant, id),
            recordDecider,
            command,
            itemContext(index),
            {
              mayBeRepeat: true,
            },
          );
          return { id, result };
        });
      // A first run: every item's id is new, so the valid items are decided without reading their streams and
      // appended together. The items share one read of each module they name.
      const sharingReads = recordCommandSpec(loadingEachStreamOnce(deps.handler));
      const outcomes = new Array<ItemOutcome>(items.length);
      const commands: NewStreamCommand<RecordCommand>[] = [];
      const commandItems: number[] = [];
      for (const [index, candidate] of items.entries()) {
        try {
          const item = validate(createRecordBody, candidate, `item ${index}`);
          const id = identity.entityIds[index]!;
          commands.push({
            streamId: streamOf(tenant, id),
            command: (await sharingReads.prepareCreate(item, tenant))(id),
            context: itemContext(index),
          });
          commandItems.push(index);
        } catch (error) {
          outcomes[index] = failedItem(error);
        }
      }
      const decided = await deps.handler.handleNewStreams(recordDecider, commands);
      decided.forEach((outcome, commandIndex) => {
        const index = commandItems[commandIndex]!;
        outcomes[index] = outcome.ok
          ? { ok: true, id: identity.entityIds[index]!, result: outcome.result }
          : failedItem(outcome.error);
      });
      return outcomes;
    },

    /**
     * Updates records, each item (with its record's `id`) its own command, as `createMany` does;
     * `itemContext` gives each its context.
     */
    updateMany(itemContext: () => CommandContext, items: readonly unknown[]): Promise<ItemOutcome[]> {
      return runItems(items.length, async (index) => {
        const item = validate(updateRecordBody, items[index], `item ${index}`);
        const { id } = item;
        if (id === undefined)
          throw new PlatformError('validation_failed', `item ${index}: every item needs the record's "id"`, [
            { path: 'id', message: 'required' },
          ]);
        return { id, result: await resource.update(itemContext(), id, item) };
      });
    },

    /** Deletes records, each its own command, as `createMany` does. */
    deleteMany(itemContext: () => CommandContext, ids: readonly number[]): Promise<ItemOutcome[]> {
      return runItems(ids.length, async (index) => {
        const id = ids[index]!;
        return { id, result: await resource.delete(itemContext(), id) };
      });
    },
  };
}

export type RecordCommands = ReturnType<typeof recordCommands>;

/** The definitions of the record fields a list may name, by the keys and ids it names (of a space, of a system). */
/**
 * A list's `filter` and `order` texts, checked as its list would check them: a syntax error is a 400 naming the
 * position, a field key must name a field (of the modules the filter requires, if it requires some) and values
 * must fit it. Empty text means none (null); what was not given stays undefined.
 */
export async function checkedListTexts(
  fieldsNamed: NamedRecordFields,
  texts: { readonly filter?: string | null; readonly order?: string | null },
): Promise<{ filter?: string | null; order?: string | null }> {
  const given = (text: string | null | undefined): string | null | undefined => (text === '' ? null : text);
  const filterText = given(texts.filter);
  const orderText = given(texts.order);
  await resolveRecordListTexts(fieldsNamed, {
    ...(typeof filterText === 'string' && { filter: filterText }),
    ...(typeof orderText === 'string' && { order: orderText }),
  });
  return {
    ...(filterText !== undefined && { filter: filterText }),
    ...(orderText !== undefined && { order: orderText }),
  };
}

const segmentDecider = attributesDecider(SEGMENT);

/** What a saved segment's create and update check: its space, and its filter and order as its lists would. */
export function segmentChecks(
  deps: Pick<CommandDeps, 'handler' | 'reads'>,
): AttributesChecks<z.infer<typeof createSegmentBody>, z.infer<typeof updateSegmentBody>> {
  const fieldsOfSpace =
    (tenant: string, spaceId: number): NamedRecordFields =>
    (named) =>
      deps.reads.recordFieldsOfSpace(tenant, spaceId, named);
  return {
    async checkCreate(body, tenant) {
      const checked = await checkedListTexts(fieldsOfSpace(tenant, body.spaceId), body);
      const filter = checked.filter ?? null;
      const order = checked.order ?? null;
      const space = await deps.handler.load(streamName('space', tenant, body.spaceId), spaceDecider);
      if (space.state.status !== 'active')
        throw new PlatformError('validation_failed', `space ${body.spaceId} does not exist`, [
          { path: 'spaceId', message: 'no such space' },
        ]);
      return { spaceId: body.spaceId, name: body.name, filter, order };
    },
    async checkUpdate(body, tenant, segmentId) {
      const segment = await deps.handler.load(streamName('segment', tenant, segmentId), segmentDecider);
      const spaceId = segment.state.attributes.spaceId;
      const { filter, order } =
        typeof spaceId === 'number' ? await checkedListTexts(fieldsOfSpace(tenant, spaceId), body) : body;
      return {
        ...(body.name !== undefined && { name: body.name }),
        ...(filter !== undefined && { filter }),
        ...(order !== undefined && { order }),
      };
    },
  };
}

/**
 * Presses a button field: the button's webhook gets the record (through the SSRF guard); what it answered
 * is recorded as `ButtonPressed`. A 2xx is `ok`; another status is still a press (`ok: false`); no answer
 * at all is recorded, then refused as `upstream_failed`.
 */
export async function pressButton(
  deps: RecordCommandDeps & Pick<CommandDeps, 'outbound' | 'hooks'>,
  context: CommandContext,
  recordId: number,
  fieldId: number,
): Promise<{ result: CommandResult<RecordState>; press: ButtonPress }> {
  const stream = streamName('record', context.tenant, recordId);
  const record = await deps.handler.load(stream, recordDecider);
  if (record.state.status !== 'active') throw new PlatformError('not_found', `record ${recordId} not found`);
  const module = await moduleFields(deps.handler, context.tenant, record.state.moduleId);
  const field = module?.fields.find((candidate) => candidate.fieldId === fieldId);
  if (!field) throw new PlatformError('not_found', `field ${fieldId} not found in the record's module`);
  if (field.type !== 'button')
    throw new PlatformError('validation_failed', `field ${fieldId} is not a button`);
  let outcome: { ok: boolean; status: number | null; durationMs: number; error?: string };
  let answerBody: string | null = null;
  const url = String(field.config.webhookUrl);
  const press = {
    event: 'button.pressed',
    system: context.tenant,
    field: { id: field.fieldId, key: field.key, name: field.name },
    record: recordView(record.state),
    pressedBy: context.actor.userId,
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
    context,
  );
  if (outcome.status === null)
    throw new PlatformError('upstream_failed', `the button's webhook did not answer: ${outcome.error ?? ''}`);
  return { result, press: { ok: outcome.ok, status: outcome.status, body: answerBody } };
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
