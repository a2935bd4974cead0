import type { Router } from 'express';
import {
  getAiBalance,
  getAiJob,
  getAiUsage,
  listAiJobItems,
  TRANSFORM_OPERATIONS,
  usageQuery,
  VALIDATION_OPERATIONS,
  VALIDATION_RESULT_OPERATIONS,
} from '../../contracts/api/ai';
import { aiBalanceView } from '../../contracts/ai-balance';
import { AUDIT_COLUMNS } from '../../languages/filter/record-fields';
import { catalogue } from '../../languages/filter/resolve';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import type { Document } from '../../contracts/read-model-changes';
import { validate } from '../../contracts/validation';
import { mount } from '../../infra/http/operations';
import { sendJson } from '../../infra/http/respond';
import { attributesView } from '../representations';
import { awaitConsistency } from '../consistency';
import { equals } from '../../languages/filter/store-query';
import { idParam } from '../../infra/http/params';
import {
  addEntityRoutes,
  authorize,
  readOne,
  readPage,
  type EntityDescription,
  type EntityReadDeps,
} from './entities';

const common = {
  name: { path: 'name', type: 'string' },
  moduleId: { path: 'moduleId', type: 'integer' },
  fieldId: { path: 'fieldId', type: 'integer' },
  model: { path: 'model', type: 'string' },
  ...AUDIT_COLUMNS,
} as const;

/** The answer shape of a configuration: `id` and the spec's `entityId`, the attributes, the audit columns. */
function configurationView(idKey: string): (doc: Document) => Record<string, unknown> {
  const view = attributesView(idKey);
  return (doc) => {
    const { inputDigest: _inputDigest, ...shown } = view(doc);
    return { id: shown.id, entityId: shown.id, ...shown };
  };
}

const TRANSFORMS: EntityDescription = {
  module: 'columnDataTransform',
  collection: READ_MODELS.aiTransforms,
  projection: 'ai-transforms',
  noun: 'column-data transform',
  view: configurationView('transformId'),
  fields: catalogue({
    id: { path: 'transformId', type: 'integer' },
    entityId: { path: 'transformId', type: 'integer' },
    outputType: { path: 'outputType', type: 'string' },
    onlyEmpty: { path: 'onlyEmpty', type: 'boolean' },
    ...common,
  }),
};

const VALIDATIONS: EntityDescription = {
  module: 'columnDataValidation',
  collection: READ_MODELS.aiValidations,
  projection: 'ai-validations',
  noun: 'column-data validation',
  view: configurationView('validationId'),
  fields: catalogue({
    id: { path: 'validationId', type: 'integer' },
    entityId: { path: 'validationId', type: 'integer' },
    severity: { path: 'severity', type: 'string' },
    ...common,
  }),
};

const VALIDATION_RESULTS: EntityDescription = {
  module: 'columnDataValidationResult',
  collection: READ_MODELS.aiValidationResults,
  projection: 'ai-validation-results',
  noun: 'column-data validation result',
  view: configurationView('validationResultId'),
  fields: catalogue({
    id: { path: 'validationResultId', type: 'integer' },
    entityId: { path: 'validationResultId', type: 'integer' },
    validationId: { path: 'validationId', type: 'integer' },
    recordId: { path: 'recordId', type: 'integer' },
    moduleId: { path: 'moduleId', type: 'integer' },
    fieldId: { path: 'fieldId', type: 'integer' },
    valid: { path: 'valid', type: 'boolean' },
    severity: { path: 'severity', type: 'string' },
    source: { path: 'source', type: 'string' },
    checkedAt: { path: 'checkedAt', type: 'datetime' },
    ...AUDIT_COLUMNS,
  }),
};

const JOBS: EntityDescription = {
  module: 'aiJob',
  collection: READ_MODELS.aiJobs,
  projection: 'ai-jobs',
  noun: 'AI job',
  view: (doc) => {
    const {
      id: _id,
      tenant: _tenant,
      revision: _revision,
      createdAt: _createdAt,
      updatedAt: _updatedAt,
      createdBy: _createdBy,
      updatedBy: _updatedBy,
      ...job
    } = doc;
    return job;
  },
  fields: catalogue({ id: { path: 'jobId', type: 'integer' } }),
};

const JOB_ITEMS: EntityDescription = {
  module: 'aiJob',
  collection: READ_MODELS.aiJobItems,
  projection: 'ai-jobs',
  noun: 'AI job item',
  view: (doc) => {
    const { id: _id, tenant: _tenant, jobId: _jobId, ...item } = doc;
    return item;
  },
  fields: catalogue({
    id: { path: 'recordId', type: 'integer' },
    recordId: { path: 'recordId', type: 'integer' },
    status: { path: 'status', type: 'string' },
    tokens: { path: 'tokens', type: 'integer' },
    cached: { path: 'cached', type: 'boolean' },
  }),
};

interface UsageTotals {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  tokens: number;
}

/** The balance document's parts as the projection writes them. */
interface BalanceDocument {
  toppedUp?: number;
  spent?: number;
  reservations?: Record<string, { tokens: number; expiresAt: string }>;
  usage?: Record<string, Record<string, UsageTotals>>;
}

/** The configurations, the balance and the usage report. */
export function addAiReadRoutes(router: Router, deps: EntityReadDeps, now: () => Date): void {
  addEntityRoutes(router, deps, TRANSFORM_OPERATIONS, 'entityId', TRANSFORMS);
  addEntityRoutes(router, deps, VALIDATION_OPERATIONS, 'entityId', VALIDATIONS);
  addEntityRoutes(router, deps, VALIDATION_RESULT_OPERATIONS, 'entityId', VALIDATION_RESULTS);

  mount(router, getAiJob, async (req, res) => {
    const { body } = await readOne(req, deps, JOBS, idParam(req, 'jobId'));
    sendJson(res, 200, body);
  });
  mount(router, listAiJobItems, async (req, res) => {
    const jobId = idParam(req, 'jobId');
    await readOne(req, deps, JOBS, jobId);
    sendJson(res, 200, await readPage(req, deps, JOB_ITEMS, equals('jobId', jobId)));
  });

  const balanceOf = async (tenant: string): Promise<BalanceDocument> =>
    ((await deps.readModels.get(tenant, READ_MODELS.aiBalances, documentId(tenant, 'tokens'))) ??
      {}) as BalanceDocument;

  mount(router, getAiBalance, async (req, res) => {
    const tenant = authorize(req, 'aiBalance', 'read');
    await awaitConsistency(req, deps.consistency, ['ai-balance']);
    const balance = await balanceOf(tenant);
    const reservations = Object.values(balance.reservations ?? {}).map((reservation) => ({
      tokens: reservation.tokens,
      expiresAt: Date.parse(reservation.expiresAt),
    }));
    sendJson(
      res,
      200,
      aiBalanceView(
        { toppedUp: balance.toppedUp ?? 0, spent: balance.spent ?? 0 },
        reservations,
        now().getTime(),
      ),
    );
  });

  mount(router, getAiUsage, async (req, res) => {
    const tenant = authorize(req, 'aiBalance', 'read');
    const query = validate(usageQuery, req.query, 'query');
    await awaitConsistency(req, deps.consistency, ['ai-balance']);
    const groupBy = new Set((query.group_by ?? 'configuration,user').split(','));
    const rows = new Map<string, UsageTotals & Record<string, unknown>>();
    const total = { calls: 0, tokens: 0 };
    for (const [month, byKey] of Object.entries((await balanceOf(tenant)).usage ?? {})) {
      if ((query.from !== undefined && month < query.from) || (query.to !== undefined && month > query.to))
        continue;
      for (const [key, totals] of Object.entries(byKey)) {
        const [configuration, userId, operation] = key.split('|') as [string, string, string];
        const [kind, entityId] = configuration.split(':');
        const row = {
          configuration:
            groupBy.has('configuration') && configuration !== '-'
              ? { kind, entityId: Number(entityId) }
              : null,
          userId: groupBy.has('user') && userId !== '-' ? userId : null,
          operation: groupBy.has('operation') ? operation : null,
        };
        const rowKey = JSON.stringify(row);
        const sum = rows.get(rowKey) ?? { ...row, calls: 0, promptTokens: 0, completionTokens: 0, tokens: 0 };
        sum.calls += totals.calls;
        sum.promptTokens += totals.promptTokens;
        sum.completionTokens += totals.completionTokens;
        sum.tokens += totals.tokens;
        rows.set(rowKey, sum);
        total.calls += totals.calls;
        total.tokens += totals.tokens;
      }
    }
    sendJson(res, 200, { items: [...rows.values()].sort((a, b) => b.tokens - a.tokens), total });
  });
}
