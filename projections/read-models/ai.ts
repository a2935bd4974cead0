import type { AiSpendingPurpose } from '../../contracts/events/ai';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import type { ReadModelChange } from '../../contracts/read-model-changes';
import type { Projection } from '../projection';
import { createdColumns, updatedColumns } from './common';
import { entityProjection, setAllBut } from './entity';

export const transformsProjection = entityProjection({
  name: 'ai-transforms',
  category: 'columnDataTransform',
  collection: READ_MODELS.aiTransforms,
  indexes: [
    { name: 'tenant_transformId', paths: ['tenant', 'transformId'] },
    { name: 'tenant_moduleId_transformId', paths: ['tenant', 'moduleId', 'transformId'] },
  ],
  idKey: 'transformId',
  created: 'ColumnDataTransformCreated',
  deleted: 'ColumnDataTransformDeleted',
  patches: { ColumnDataTransformUpdated: setAllBut('transformId') },
});

export const validationsProjection = entityProjection({
  name: 'ai-validations',
  category: 'columnDataValidation',
  collection: READ_MODELS.aiValidations,
  indexes: [
    { name: 'tenant_validationId', paths: ['tenant', 'validationId'] },
    { name: 'tenant_moduleId_validationId', paths: ['tenant', 'moduleId', 'validationId'] },
  ],
  idKey: 'validationId',
  created: 'ColumnDataValidationCreated',
  deleted: 'ColumnDataValidationDeleted',
  patches: { ColumnDataValidationUpdated: setAllBut('validationId') },
});

export const validationResultsProjection = entityProjection({
  name: 'ai-validation-results',
  category: 'columnDataValidationResult',
  collection: READ_MODELS.aiValidationResults,
  indexes: [
    { name: 'tenant_validationResultId', paths: ['tenant', 'validationResultId'] },
    // An execute finds the latest verdict on a record by these.
    { name: 'tenant_validation_record', paths: ['tenant', 'validationId', 'recordId', 'validationResultId'] },
    { name: 'tenant_record', paths: ['tenant', 'recordId'] },
  ],
  idKey: 'validationResultId',
  created: 'ColumnDataValidationResultCreated',
  deleted: 'ColumnDataValidationResultDeleted',
  patches: { ColumnDataValidationResultUpdated: setAllBut('validationResultId') },
});

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
              [`reservations.${String(data.reservationId)}`]: {
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
            unset: [`reservations.${String(data.reservationId)}`],
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
            ...(data.reservationId !== null && { unset: [`reservations.${String(data.reservationId)}`] }),
            inc: {
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
