import type { Request, Response, Router } from 'express';
import {
  executeBody,
  executeTransform,
  executeValidation,
  previewBody,
  previewTransform,
} from '../../../contracts/api/ai';
import { parseValueAnswer } from '../../../contracts/ai-output';
import { PlatformError } from '../../../contracts/errors';
import type { FieldValue } from '../../../contracts/events/records';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { idParam } from '../../../infra/http/params';
import { transformRequest } from '../requests';
import { jobCounts, type AiJobState } from '../domain/ai-job';
import { checkRecordValues } from '../../records/domain/field-values';
import type { CommandDeps } from '../../deps';
import { requestHash } from '../../kit/idempotency';
import { activeConfiguration, configurationField } from '../configurations';
import { checkReferences } from './ai-configurations';
import { authorize, commandContext, idempotencyKey, sendAt } from '../../kit/route-context';
import { inSlot } from '../ai-slots';

/** An execute job as its answers show it: counts, and (once finished) every record's outcome in the order asked. */
function jobView(job: AiJobState, withItems: boolean): Record<string, unknown> {
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
    await deps.ai.model.assertCovers(tenant, 'one record of this execute', {
      messages: [
        { role: 'user', content: String(configuration.attributes.prompt ?? configuration.attributes.rule) },
      ],
      maxOutputTokens: Number(configuration.attributes.maxOutputTokens),
    });

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
    // A job that stops before its end is logged and resumed; the answer is its progress then.
    await Promise.race([
      done.catch(() => undefined),
      new Promise<void>((resolve) => {
        waited = setTimeout(resolve, executeWaitMs);
      }),
    ]).finally(() => clearTimeout(waited));
    const { job, position } = await deps.ai.jobs.current(tenant, jobId);
    if (job.status === 'finished') {
      sendAt(res, 201, position, jobView(job, true));
      return;
    }
    res.setHeader('Location', `${req.baseUrl}/ai/job/${jobId}`);
    sendAt(res, 202, position, jobView(job, false));
  };
  mount(router, executeTransform, (req, res) => execute(req, res, 'transform'));
  mount(router, executeValidation, (req, res) => execute(req, res, 'validation'));

  mount(router, previewTransform, async (req, res) => {
    // A preview spends the system's tokens: the transform's write right, not its read right, says so.
    const principal = authorize(req, 'columnDataTransform', 'update');
    const entityId = idParam(req, 'entityId');
    const body = validate(previewBody, req.body, 'body');
    const { tenant } = principal;
    const configuration = await activeConfiguration(deps.handler, 'transform', tenant, entityId);
    const { field, fields } = await configurationField(deps.handler, tenant, configuration);
    checkReferences('prompt', body.prompt, fields);
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
        context,
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
    sendAt(res, 201, answer.position, {
      entityId,
      fieldId: field.fieldId,
      outputType: field.type,
      prompt: request.messages.at(-1)!.content,
      value: parsed.value,
      fits: problem === null,
      problem,
      model: answer.model,
      tokens: answer.tokens,
    });
  });
}
