import type { Request, Response, Router } from 'express';
import {
  executeBody,
  executeTransform,
  executeValidation,
  previewBody,
  previewTransform,
} from '../../contracts/api/ai';
import { parseValueAnswer } from '../../contracts/ai-output';
import { unknownReferences } from '../../contracts/ai-prompt';
import { PlatformError } from '../../contracts/errors';
import type { FieldValue } from '../../contracts/events/records';
import { streamName } from '../../contracts/streams';
import { validate } from '../../contracts/validation';
import { mount } from '../../infra/http/operations';
import { idParam } from '../../infra/http/params';
import { sendJson } from '../../infra/http/respond';
import { transformRequest } from '../ai/jobs';
import { estimateTokens } from '../ai/metered-model';
import { AI_BALANCE_STREAM_ID, aiBalanceDecider, balanceView } from '../domain/ai-balance';
import { jobCounts, type AiJobState } from '../domain/ai-job';
import { checkRecordValues } from '../domain/field-values';
import type { CommandDeps } from '../deps';
import { requestHash } from '../kit/idempotency';
import { activeConfiguration } from './ai-configurations';
import { authorize, commandContext, idempotencyKey } from './context';
import { moduleFields } from './records';

/** An execute job as its answers show it: counts, and (once finished) every record's outcome in the order asked. */
export function jobView(job: AiJobState, withItems: boolean): Record<string, unknown> {
  const counts = jobCounts(job);
  return {
    jobId: job.jobId,
    kind: job.kind,
    entityId: job.entityId,
    status: job.status,
    total: job.ids.length,
    ...counts,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    ...(withItems && { items: job.ids.flatMap((id) => job.items.get(id) ?? []) }),
  };
}

/** The field a transform writes, and the module's fields (404 when the field is gone). */
async function transformField(
  deps: CommandDeps,
  tenant: string,
  attributes: Readonly<Record<string, unknown>>,
) {
  const module = await moduleFields(deps.handler, tenant, attributes.moduleId as number);
  const field = module?.fields.find((candidate) => candidate.fieldId === attributes.fieldId);
  if (!module || !field)
    throw new PlatformError(
      'not_found',
      `the field ${String(attributes.fieldId)} of the transform no longer exists`,
    );
  return { field, fields: module.fields };
}

/** Executes (as jobs) and the preview of a transform. */
export function addAiExecuteRoutes(router: Router, deps: CommandDeps, executeWaitMs: number): void {
  const execute = async (req: Request, res: Response, kind: 'transform' | 'validation'): Promise<void> => {
    const principal = authorize(
      req,
      kind === 'transform' ? 'columnDataTransform' : 'columnDataValidation',
      'read',
    );
    authorize(req, 'record', kind === 'transform' ? 'update' : 'read');
    if (kind === 'validation') authorize(req, 'columnDataValidationResult', 'create');
    const entityId = idParam(req, 'entityId');
    const body = validate(executeBody, req.body, 'body');
    const { tenant } = principal;
    const configuration = await activeConfiguration(deps.handler, kind, tenant, entityId);
    await deps.ai.model.modelOf(tenant);
    // Refused before anything starts when the balance cannot cover even one record (each record reserves its own).
    const text = String(configuration.attributes.prompt ?? configuration.attributes.rule ?? '');
    const oneRecord = estimateTokens({
      messages: [{ role: 'user', content: text }],
      maxOutputTokens: Number(configuration.attributes.maxOutputTokens),
    });
    const balance = await deps.handler.load(
      streamName('aiBalance', tenant, AI_BALANCE_STREAM_ID),
      aiBalanceDecider,
    );
    const { available } = balanceView(balance.state, deps.hooks.now());
    if (available < oneRecord)
      throw new PlatformError(
        'ai_balance_insufficient',
        `the AI token balance cannot cover one record of this execute: about ${oneRecord} tokens are needed and ${Math.max(available, 0)} are available; an administrator adds tokens with POST /ai/balance/top-up`,
        { needed: oneRecord, available: Math.max(available, 0) },
      );

    const path =
      kind === 'transform'
        ? `/column-data-transform/${entityId}/execute`
        : `/ai/column-data-validation/${entityId}/execute`;
    const identity = await deps.idempotency.identify(
      tenant,
      principal.credential.id,
      idempotencyKey(req),
      () => requestHash('POST', path, body),
      () => deps.ids.next(tenant, 'aiJob'),
    );
    const context = commandContext(req, principal, identity.commandId);
    const jobId = identity.entityId!;
    const { done } = await deps.ai.jobs.start({
      tenant,
      jobId,
      kind,
      entityId,
      ids: body.ids,
      context,
      commandId: identity.commandId,
    });
    let waited: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      done,
      new Promise<null>((resolve) => {
        waited = setTimeout(() => resolve(null), executeWaitMs);
      }),
    ]).finally(() => clearTimeout(waited));
    if (finished !== null && finished.status === 'finished') {
      sendJson(res, 201, jobView(finished, true));
      return;
    }
    res.setHeader('Location', `${req.baseUrl}/ai/job/${jobId}`);
    const now = finished ?? (await deps.ai.jobs.current(tenant, jobId));
    sendJson(res, 202, jobView(now, false));
  };
  mount(router, executeTransform, (req, res) => execute(req, res, 'transform'));
  mount(router, executeValidation, (req, res) => execute(req, res, 'validation'));

  mount(router, previewTransform, async (req, res) => {
    const principal = authorize(req, 'columnDataTransform', 'read');
    const entityId = idParam(req, 'entityId');
    const body = validate(previewBody, req.body, 'body');
    const { tenant } = principal;
    const configuration = await activeConfiguration(deps.handler, 'transform', tenant, entityId);
    const { field, fields } = await transformField(deps, tenant, configuration.attributes);
    const unknown = unknownReferences(
      body.prompt,
      fields.map((candidate) => candidate.key),
    );
    if (unknown.length > 0)
      throw new PlatformError(
        'validation_failed',
        `the prompt refers to what the records do not have: ${unknown.map((name) => `{{${name}}}`).join(', ')}`,
        [{ path: 'prompt', message: `unknown references: ${unknown.join(', ')}` }],
      );
    const sample = body.preview;
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
    const request = transformRequest({ ...configuration.attributes, prompt: body.prompt }, field, references);
    const context = commandContext(req, principal, '');
    const answer = await deps.ai.model.complete({
      tenant,
      purpose: {
        operation: 'transform-preview',
        configuration: { kind: 'transform', entityId },
        userId: principal.userId,
        recordId: null,
      },
      request,
      attempts: 2,
      cache: false,
      context,
    });
    const parsed = parseValueAnswer(answer.text, field);
    if (!parsed.ok) throw new PlatformError('upstream_failed', parsed.reason);
    let problem: string | null = null;
    try {
      checkRecordValues(fields, { [field.key]: parsed.value as FieldValue }, new Map(), 'update');
    } catch (error) {
      if (!(error instanceof PlatformError)) throw error;
      problem = error.message;
    }
    const spent: Record<string, string> =
      answer.position === undefined ? {} : { 'X-Position': answer.position.toString() };
    sendJson(
      res,
      201,
      {
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
      spent,
    );
  });
}
