import type { AiJobItem, AiSpendingPurpose } from '../../contracts/events/ai';
import type { RecordErasedData } from '../../contracts/events/records';
import { ERASED_VALUE } from '../../contracts/personal-data';
import { categoryOf } from '../../contracts/streams';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import type { ReadModelChange } from '../../contracts/read-model-changes';
import type { Projection } from '../projection';
import { createdColumns, pathSegmentOf, updatedColumns } from './common';
import { attributesProjection } from './catalogue-entities';

export const transformsProjection = attributesProjection({
  name: 'ai-transforms',
  category: 'columnDataTransform',
  collection: READ_MODELS.aiTransforms,
  eventPrefix: 'ColumnDataTransform',
  idKey: 'transformId',
  indexes: [
    { name: 'tenant_transformId', paths: ['tenant', 'transformId'] },
    { name: 'tenant_moduleId_transformId', paths: ['tenant', 'moduleId', 'transformId'] },
  ],
});

export const validationsProjection = attributesProjection({
  name: 'ai-validations',
  category: 'columnDataValidation',
  collection: READ_MODELS.aiValidations,
  eventPrefix: 'ColumnDataValidation',
  idKey: 'validationId',
  indexes: [
    { name: 'tenant_validationId', paths: ['tenant', 'validationId'] },
    { name: 'tenant_moduleId_validationId', paths: ['tenant', 'moduleId', 'validationId'] },
  ],
});

const validationResults = attributesProjection({
  name: 'ai-validation-results',
  category: 'columnDataValidationResult',
  collection: READ_MODELS.aiValidationResults,
  eventPrefix: 'ColumnDataValidationResult',
  idKey: 'validationResultId',
  indexes: [
    { name: 'tenant_validationResultId', paths: ['tenant', 'validationResultId'] },
    // An execute finds the latest verdict on a record by these.
    { name: 'tenant_validation_record', paths: ['tenant', 'validationId', 'recordId', 'validationResultId'] },
    { name: 'tenant_record', paths: ['tenant', 'recordId'] },
  ],
});

/** Validation results; a record's erasure erases what its verdicts checked and said. */
export const validationResultsProjection: Projection = {
  ...validationResults,
  categories: [...validationResults.categories, 'record'],
  project(event, collection): readonly ReadModelChange[] {
    if (categoryOf(event.streamId) !== 'record') return validationResults.project(event, collection);
    if (event.type !== 'RecordErased') return [];
    return [
      {
        op: 'patchWhere',
        collection: collection(READ_MODELS.aiValidationResults),
        where: { tenant: event.metadata.tenant, recordId: (event.data as RecordErasedData).recordId },
        set: { checkedValue: ERASED_VALUE, reason: ERASED_VALUE },
        position: event.position,
      },
    ];
  },
};

/** The key a spending is totalled under: what it was for and who asked, in one map key (no `.`). */
export function usageKey(purpose: AiSpendingPurpose): string {
  const configuration =
    purpose.configuration === null ? '-' : `${purpose.configuration.kind}:${purpose.configuration.entityId}`;
  return `${configuration}|${purpose.userId ?? '-'}|${purpose.operation}`;
}

/**
 * A system's AI token balance as one document: totals, the reservations open, and spending totalled per
 * month, configuration, user and operation (`usage.<YYYY-MM>.<usageKey>`), so a usage report reads one
 * document whatever the number of calls. The first event of the stream is always a top-up (nothing can be
 * reserved or spent before tokens are added): it makes the document, every later event patches it.
 */
export const aiBalanceProjection: Projection = {
  name: 'ai-balance',
  categories: ['aiBalance'],
  collections: { [READ_MODELS.aiBalances]: [{ name: 'tenant', paths: ['tenant'] }] },
  project(event, collection): ReadModelChange[] {
    const target = collection(READ_MODELS.aiBalances);
    const id = documentId(event.metadata.tenant, 'tokens');
    const { position } = event;
    const data = event.data as Record<string, unknown>;
    switch (event.type) {
      case 'AiTokensToppedUp': {
        const tokens = data.tokens as number;
        if (event.revision === 0n)
          return [
            {
              op: 'upsert',
              collection: target,
              position,
              doc: { id, ...createdColumns(event), toppedUp: tokens, spent: 0, reservations: {}, usage: {} },
            },
          ];
        return [
          {
            op: 'patch',
            collection: target,
            id,
            position,
            set: updatedColumns(event),
            inc: { toppedUp: tokens },
          },
        ];
      }
      case 'AiTokensReserved':
        return [
          {
            op: 'patch',
            collection: target,
            id,
            position,
            set: {
              ...updatedColumns(event),
              [`reservations.${pathSegmentOf(String(data.reservationId))}`]: {
                tokens: data.tokens,
                expiresAt: data.expiresAt,
              },
            },
          },
        ];
      case 'AiReservationReleased':
        return [
          {
            op: 'patch',
            collection: target,
            id,
            position,
            set: updatedColumns(event),
            unset: [`reservations.${pathSegmentOf(String(data.reservationId))}`],
          },
        ];
      case 'AiTokensSpent': {
        const month = String(data.at).slice(0, 7);
        const key = `usage.${month}.${usageKey(data.purpose as AiSpendingPurpose)}`;
        return [
          {
            op: 'patch',
            collection: target,
            id,
            position,
            set: updatedColumns(event),
            // All of a call's own reservation goes; a job's block loses what the call held of it.
            ...(data.reservationId !== null &&
              data.settles === undefined && {
                unset: [`reservations.${pathSegmentOf(String(data.reservationId))}`],
              }),
            inc: {
              ...(data.reservationId !== null &&
                data.settles !== undefined && {
                  [`reservations.${pathSegmentOf(String(data.reservationId))}.tokens`]:
                    -(data.settles as number),
                }),
              spent: data.tokens as number,
              [`${key}.calls`]: 1,
              [`${key}.promptTokens`]: data.promptTokens as number,
              [`${key}.completionTokens`]: data.completionTokens as number,
              [`${key}.tokens`]: data.tokens as number,
            },
          },
        ];
      }
      default:
        return [];
    }
  },
};

/**
 * Execute jobs: a summary per job (its counts move as records finish) and one document per finished record,
 * so a job's outcomes page like any list.
 */
export const aiJobsProjection: Projection = {
  name: 'ai-jobs',
  categories: ['aiJob'],
  collections: {
    [READ_MODELS.aiJobs]: [{ name: 'tenant_jobId', paths: ['tenant', 'jobId'] }],
    [READ_MODELS.aiJobItems]: [{ name: 'tenant_job_record', paths: ['tenant', 'jobId', 'recordId'] }],
  },
  project(event, collection): ReadModelChange[] {
    const data = event.data as Record<string, unknown>;
    const jobId = data.jobId as number;
    const tenant = event.metadata.tenant;
    const id = documentId(tenant, jobId);
    const jobs = collection(READ_MODELS.aiJobs);
    const { position } = event;
    switch (event.type) {
      case 'AiJobStarted':
        return [
          {
            op: 'upsert',
            collection: jobs,
            position,
            doc: {
              id,
              ...createdColumns(event),
              jobId,
              kind: data.kind,
              entityId: data.entityId,
              status: 'running',
              total: (data.ids as number[]).length,
              done: 0,
              unchanged: 0,
              skipped: 0,
              failed: 0,
              tokens: 0,
              startedAt: data.startedAt,
              finishedAt: null,
            },
          },
        ];
      case 'AiJobItemsFinished': {
        const items = data.items as AiJobItem[];
        const inc: Record<string, number> = { tokens: 0 };
        for (const item of items) {
          inc[item.status] = (inc[item.status] ?? 0) + 1;
          inc.tokens! += item.tokens;
        }
        return [
          { op: 'patch', collection: jobs, id, position, set: updatedColumns(event), inc },
          ...items.map((item): ReadModelChange => ({
            op: 'upsert',
            collection: collection(READ_MODELS.aiJobItems),
            position,
            doc: { id: documentId(tenant, `${jobId}:${item.recordId}`), tenant, jobId, ...item },
          })),
        ];
      }
      case 'AiJobFinished':
        return [
          {
            op: 'patch',
            collection: jobs,
            id,
            position,
            set: { ...updatedColumns(event), status: 'finished', finishedAt: data.finishedAt },
          },
        ];
      default:
        return [];
    }
  },
};
