import type { Request, Response, Router } from 'express';
import {
  executeBody,
  executeTransform,
  executeValidation,
  previewBody,
  previewTransform as previewTransformOperation,
} from '../../../contracts/api/ai';
import { validate } from '../../../contracts/validation';
import { mount } from '../../../infra/http/operations';
import { idParam } from '../../../infra/http/params';
import { jobCounts, type AiJobState } from '../domain/ai-job';
import type { CommandDeps } from '../../deps';
import { requestHash } from '../../kit/idempotency';
import { authorize, callerOf, idempotencyKey, sendAt } from '../../kit/route-context';
import { executeConfiguration, previewTransform } from '../commands';

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
    const path =
      kind === 'transform'
        ? `/column-data-transform/${entityId}/execute`
        : `/ai/column-data-validation/${entityId}/execute`;
    const { job, position } = await executeConfiguration(
      deps,
      callerOf(req, principal),
      kind,
      entityId,
      body,
      { key: idempotencyKey(req), hash: () => requestHash('POST', path, body) },
      executeWaitMs,
    );
    if (job.status === 'finished') {
      sendAt(res, 201, position, jobView(job, true));
      return;
    }
    res.setHeader('Location', `${req.baseUrl}/ai/job/${job.jobId}`);
    sendAt(res, 202, position, jobView(job, false));
  };
  mount(router, executeTransform, (req, res) => execute(req, res, 'transform'));
  mount(router, executeValidation, (req, res) => execute(req, res, 'validation'));

  mount(router, previewTransformOperation, async (req, res) => {
    // A preview spends the system's tokens: the transform's write right, not its read right, says so.
    const principal = authorize(req, 'columnDataTransform', 'update');
    const entityId = idParam(req, 'entityId');
    const body = validate(previewBody, req.body, 'body');
    const { preview, position } = await previewTransform(deps, callerOf(req, principal), entityId, body);
    sendAt(res, 201, position, preview);
  });
}
