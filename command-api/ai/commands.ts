import type { z } from 'zod';
import type {
  executeBody,
  generateFieldBody,
  previewBody,
  systemAiBody,
  topUpBody,
} from '../../contracts/api/ai';
import { parseValueAnswer, TRANSFORMABLE_TYPES } from '../../contracts/ai-output';
import { entityIdFromText } from '../../contracts/entity-id';
import { PlatformError } from '../../contracts/errors';
import type { AiSpendingPurpose } from '../../contracts/events/ai';
import type { FieldValue } from '../../contracts/events/records';
import { isValidTenant, streamName } from '../../contracts/streams';
import type { CommandDeps } from '../deps';
import type { Caller, RepeatIdentity } from '../kit/caller';
import { withCommandId, type CommandResult } from '../kit/handler';
import { checkRecordValues } from '../records/domain/field-values';
import { recordDecider, type RecordState } from '../records/domain/record';
import { moduleFields } from '../structure/commands';
import type { ModuleState } from '../structure/domain/module';
import { tenantDecider } from '../systems/domain/tenant';
import { inSlot } from './ai-slots';
import { activeConfiguration, checkReferences, configurationField } from './configurations';
import { AI_BALANCE_STREAM_ID, aiBalanceDecider, type AiBalanceState } from './domain/ai-balance';
import type { AiJobState } from './domain/ai-job';
import { systemAiDecider, type SystemAiSettings } from './domain/system-ai';
import { fittingValue, proposedField, proposedModules } from './generation-answers';
import { fieldRequest, modulesRequest, valueRequest, type GenerationRequest } from './generation-prompts';
import type { MeteredAnswer } from './metered-model';
import { transformRequest } from './requests';

/**
 * The AI features' commands: generation (modules, a field, a value), executes and the preview of saved
 * configurations, the token balance's top-up, and a system's model. Each call to the model is metered against
 * the system's AI token balance.
 */

// ---------------------------------------------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------------------------------------------

/** Rate limits and the model's 5xx are retried this often before the route answers 503. */
const MODEL_ATTEMPTS = 3;

/** The prompt, refused with a 400 when it says nothing. */
function requiredPrompt(prompt: string | null, what: string): string {
  if (prompt === null || prompt === '')
    throw new PlatformError('validation_failed', `the prompt is needed: say ${what}`, [
      { path: 'prompt', message: 'must not be empty' },
    ]);
  return prompt;
}

/** The module `module` names: its canonical id, else its exact name (one module only). A 400 otherwise. */
async function namedModule(deps: CommandDeps, tenant: string, module: string): Promise<ModuleState> {
  const id = entityIdFromText(module);
  const ids = id !== undefined ? [id] : await deps.reads.modulesNamed(tenant, module);
  if (ids.length === 0)
    throw new PlatformError('validation_failed', `no module is named ${JSON.stringify(module)}`, [
      { path: 'module', message: 'no such module' },
    ]);
  if (ids.length > 1)
    throw new PlatformError(
      'validation_failed',
      `several modules are named ${JSON.stringify(module)}; give its id`,
      [{ path: 'module', message: 'names several modules' }],
    );
  const found = await moduleFields(deps.handler, tenant, ids[0]!);
  if (!found)
    throw new PlatformError('validation_failed', `module ${ids[0]} does not exist`, [
      { path: 'module', message: 'no such module' },
    ]);
  return found;
}

/** The field `fieldId` and its module (a 404 when either is gone). */
async function fieldAndModule(deps: CommandDeps, tenant: string, fieldId: number) {
  const moduleId = await deps.reads.fieldModule(tenant, fieldId);
  const module = moduleId === null ? null : await moduleFields(deps.handler, tenant, moduleId);
  const field = module?.fields.find((candidate) => candidate.fieldId === fieldId);
  if (!module || !field) throw new PlatformError('not_found', `field ${fieldId} not found`);
  return { module, field };
}

/** Record `recordId`, which must be one of `module`'s. */
async function recordOf(
  deps: CommandDeps,
  tenant: string,
  recordId: number,
  module: ModuleState,
): Promise<RecordState> {
  const record = (await deps.handler.load(streamName('record', tenant, recordId), recordDecider)).state;
  if (record.status !== 'active') throw new PlatformError('not_found', `record ${recordId} not found`);
  if (record.moduleId !== module.moduleId)
    throw new PlatformError(
      'validation_failed',
      `record ${recordId} is not a record of module ${module.moduleId}, the field's module`,
      [{ path: 'recordId', message: `not in module ${module.moduleId}` }],
    );
  return record;
}

/** The transform that guides the field's values, when it has one. */
async function transformOf(deps: CommandDeps, tenant: string, fieldId: number) {
  const transformId = await deps.reads.transformOfField(tenant, fieldId);
  if (transformId === null) return null;
  try {
    return await activeConfiguration(deps.handler, 'transform', tenant, transformId);
  } catch (error) {
    // The read model may still list a transform another process deleted a moment ago: then there is none.
    if (error instanceof PlatformError && error.kind === 'not_found') return null;
    throw error;
  }
}

/** One metered model call for a generation: never cached (each asks anew), retried on the model's hiccups. */
function ask(
  deps: CommandDeps,
  caller: Caller,
  purpose: Omit<AiSpendingPurpose, 'userId'>,
  request: GenerationRequest,
): Promise<MeteredAnswer> {
  const { principal } = caller;
  return inSlot(deps.ai.slots, principal.tenant, principal.credential.id, deps.ai.slotWaitMs, () =>
    deps.ai.model.complete({
      tenant: principal.tenant,
      purpose: { ...purpose, userId: principal.userId },
      request: { ...request, json: true },
      attempts: MODEL_ATTEMPTS,
      context: caller.origin,
    }),
  );
}

/** A generation's outcome: what it proposes, and the position of what it spent. */
export interface Generated<Proposal> {
  readonly proposal: Proposal;
  readonly position: bigint | undefined;
}

/** Modules and their fields for a purpose, as the bodies that would create them. */
export async function proposeModules(
  deps: CommandDeps,
  caller: Caller,
  prompt: string | null,
): Promise<Generated<ReturnType<typeof proposedModules>>> {
  const asked = requiredPrompt(prompt, 'what the modules are for');
  const answer = await ask(
    deps,
    caller,
    { operation: 'generate-modules', configuration: null, recordId: null },
    modulesRequest(asked),
  );
  return { proposal: proposedModules(answer), position: answer.position };
}

/** One field for what the prompt says; for a named module, one it does not have yet (with its id). */
export async function proposeField(
  deps: CommandDeps,
  caller: Caller,
  input: z.infer<typeof generateFieldBody>,
): Promise<Generated<ReturnType<typeof proposedField> & { readonly moduleId?: number }>> {
  const prompt = requiredPrompt(input.prompt, 'what the field holds');
  const module =
    input.module === null || input.module === ''
      ? null
      : await namedModule(deps, caller.principal.tenant, input.module);
  const answer = await ask(
    deps,
    caller,
    { operation: 'generate-field', configuration: null, recordId: null },
    fieldRequest(prompt, input.table === '' ? null : input.table, module),
  );
  const field = proposedField(answer, module);
  return {
    proposal: module === null ? field : { moduleId: module.moduleId, ...field },
    position: answer.position,
  };
}

/** A value of field `fieldId`, as its transform would write it for record `recordId` (or an example). */
export async function generateValue(deps: CommandDeps, caller: Caller, fieldId: number, recordId?: number) {
  const { tenant } = caller.principal;
  const { module, field } = await fieldAndModule(deps, tenant, fieldId);
  if (!TRANSFORMABLE_TYPES.includes(field.type))
    throw new PlatformError(
      'validation_failed',
      `field ${fieldId} is a ${field.type} field, an unsupported type: no value of it is generated; supported: ${TRANSFORMABLE_TYPES.join(', ')}`,
      [{ path: 'fieldId', message: `unsupported type ${field.type}` }],
    );
  const record = recordId === undefined ? null : await recordOf(deps, tenant, recordId, module);
  const transform = await transformOf(deps, tenant, fieldId);
  const answer = await ask(
    deps,
    caller,
    {
      operation: 'generate-field-value',
      configuration: { kind: 'field', entityId: fieldId },
      recordId: recordId ?? null,
    },
    valueRequest(field, transform?.attributes, record),
  );
  return {
    position: answer.position,
    generated: {
      fieldId,
      key: field.key,
      type: field.type,
      value: fittingValue(answer, field),
      transformId: transform?.id ?? null,
      model: answer.model,
      tokens: answer.tokens,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Executes and the preview
// ---------------------------------------------------------------------------------------------------------

/**
 * Starts an execute of saved configuration `entityId` (a job over `input.ids`, or the first attempt's when it
 * comes again) and waits up to `waitMs` for its end; the job as it stands then.
 */
export async function executeConfiguration(
  deps: CommandDeps,
  caller: Caller,
  kind: 'transform' | 'validation',
  entityId: number,
  input: z.infer<typeof executeBody>,
  repeat: RepeatIdentity,
  waitMs: number,
): Promise<{ readonly job: AiJobState; readonly position: bigint | undefined }> {
  const { principal } = caller;
  const { tenant } = principal;
  const configuration = await activeConfiguration(deps.handler, kind, tenant, entityId);
  await deps.ai.model.modelOf(tenant);
  await deps.ai.model.assertCovers(tenant, 'one record of this execute', {
    messages: [
      { role: 'user', content: String(configuration.attributes.prompt ?? configuration.attributes.rule) },
    ],
    maxOutputTokens: Number(configuration.attributes.maxOutputTokens),
  });
  const identity = await deps.idempotency.identify(
    tenant,
    principal.credential.id,
    repeat.key,
    repeat.hash,
    () => deps.ids.next(tenant, 'aiJob'),
  );
  const jobId = identity.entityId!;
  const { done } = await deps.ai.jobs.start({
    tenant,
    jobId,
    kind,
    entityId,
    ids: input.ids,
    context: withCommandId(caller.origin, identity.commandId),
    commandId: identity.commandId,
  });
  let waited: NodeJS.Timeout | undefined;
  // A job that stops before its end is logged and resumed; the answer is its progress then.
  await Promise.race([
    done.catch(() => undefined),
    new Promise<void>((resolve) => {
      waited = setTimeout(resolve, waitMs);
    }),
  ]).finally(() => clearTimeout(waited));
  return deps.ai.jobs.current(tenant, jobId);
}

/** What transform `entityId` would write with `input.prompt` for a sample record, and whether it fits. */
export async function previewTransform(
  deps: CommandDeps,
  caller: Caller,
  entityId: number,
  input: z.infer<typeof previewBody>,
) {
  const { principal } = caller;
  const { tenant } = principal;
  const configuration = await activeConfiguration(deps.handler, 'transform', tenant, entityId);
  const { field, fields } = await configurationField(deps.handler, tenant, configuration);
  checkReferences('prompt', input.prompt, fields);
  const sample = input.preview;
  const values =
    typeof sample.fields === 'object' && sample.fields !== null && !Array.isArray(sample.fields)
      ? (sample.fields as Record<string, unknown>)
      : sample;
  const references = {
    ...values,
    name: typeof sample.name === 'string' ? sample.name : '',
    id: sample.id ?? null,
    value: values[field.key] ?? null,
  };
  const request = transformRequest({ ...configuration.attributes, prompt: input.prompt }, field, references);
  const answer = await inSlot(deps.ai.slots, tenant, principal.credential.id, deps.ai.slotWaitMs, () =>
    deps.ai.model.complete({
      tenant,
      purpose: {
        operation: 'transform-preview',
        configuration: { kind: 'transform', entityId },
        userId: principal.userId,
        recordId: null,
      },
      request,
      attempts: 2,
      context: caller.origin,
    }),
  );
  const parsed = parseValueAnswer(answer.text, field);
  if (!parsed.ok) throw new PlatformError('upstream_failed', parsed.reason);
  let problem: string | null = null;
  try {
    checkRecordValues(fields, { [field.key]: parsed.value as FieldValue }, new Map(), 'update');
  } catch (error) {
    if (!(error instanceof PlatformError)) throw error;
    problem = error.message;
  }
  return {
    position: answer.position,
    preview: {
      entityId,
      fieldId: field.fieldId,
      outputType: field.type,
      prompt: request.messages.at(-1)!.content,
      value: parsed.value,
      fits: problem === null,
      problem,
      model: answer.model,
      tokens: answer.tokens,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// The token balance and a system's model
// ---------------------------------------------------------------------------------------------------------

/** Adds tokens to the system's AI token balance (a repeat adds nothing again). */
export async function topUpBalance(
  deps: CommandDeps,
  caller: Caller,
  input: z.infer<typeof topUpBody>,
  repeat: RepeatIdentity,
): Promise<CommandResult<AiBalanceState>> {
  const { principal } = caller;
  const identity = await deps.idempotency.identify(
    principal.tenant,
    principal.credential.id,
    repeat.key,
    repeat.hash,
    null,
  );
  return deps.handler.handle(
    streamName('aiBalance', principal.tenant, AI_BALANCE_STREAM_ID),
    aiBalanceDecider,
    { kind: 'TopUp', tokens: input.tokens, note: input.note ?? null, userId: principal.userId },
    withCommandId(caller.origin, identity.commandId),
    identity.mayBeRepeat ? { mayBeRepeat: true } : {},
  );
}

/** System `system`, which must exist: the operator's own, or one it set up. */
export async function existingSystem(deps: CommandDeps, system: string): Promise<string> {
  if (!isValidTenant(system))
    throw new PlatformError('validation_failed', 'the system must be a system name (a DNS label)', [
      { path: 'system', message: 'not a system name' },
    ]);
  if (system === deps.operatorTenant) return system;
  const setUp = await deps.handler.load(streamName('tenant', deps.operatorTenant, system), tenantDecider);
  if (!setUp.state.provisioned) throw new PlatformError('not_found', `no system ${system}`);
  return system;
}

const systemAiStream = (deps: CommandDeps, system: string) =>
  streamName('aiSettings', deps.operatorTenant, system);

/** The model `system`'s AI features use from now on; its API key is kept sealed. */
export function setSystemAi(
  deps: CommandDeps,
  caller: Caller,
  system: string,
  input: z.infer<typeof systemAiBody>,
): Promise<CommandResult<SystemAiSettings | null>> {
  return deps.handler.handle(
    systemAiStream(deps, system),
    systemAiDecider,
    {
      kind: 'SetSystemAi',
      system,
      baseUrl: input.baseUrl,
      model: input.model,
      sealedApiKey: input.apiKey === undefined ? undefined : deps.sealer.seal(input.apiKey),
      timeoutMs: input.timeoutMs ?? null,
    },
    withCommandId(caller.origin, deps.newCommandId()),
  );
}

/** `system`'s AI features use the deployment's model again. */
export function clearSystemAi(
  deps: CommandDeps,
  caller: Caller,
  system: string,
): Promise<CommandResult<SystemAiSettings | null>> {
  return deps.handler.handle(
    systemAiStream(deps, system),
    systemAiDecider,
    { kind: 'ClearSystemAi', system },
    withCommandId(caller.origin, deps.newCommandId()),
  );
}
