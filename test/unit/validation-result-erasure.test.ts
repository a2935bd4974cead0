import { validationResultDecider } from '../../command-api/ai/configurations';
import { READ_MODELS } from '../../contracts/read-models';
import { streamName } from '../../contracts/streams';
import { validationResultsProjection } from '../../projections/read-models/ai';
import { deciderSpec, EventLog, projectionSpec, TEST_TENANT } from '../support/given-when-then';

const verdict = {
  validationId: 3,
  recordId: 31,
  fieldId: 5,
  moduleId: 12,
  valid: false,
  reason: 'ada@x.io is not a company address',
  severity: 'warning',
  source: 'ai',
  checkedValue: 'ada@x.io',
  checkedAt: '2026-11-27T10:00:00.000Z',
  inputDigest: null,
};

/** A verdict quotes its record's data: sealed under the record's key, and scrubbed when the record is erased. */
describe("validation results and their record's erasure", () => {
  test('a verdict seals what it checked and why, for its record; a change seals only what it changes', () => {
    deciderSpec(validationResultDecider)
      .given([])
      .when({ kind: 'Create', id: 9, attributes: verdict })
      .then([
        {
          type: 'ColumnDataValidationResultCreated',
          data: { validationResultId: 9, ...verdict },
          personal: { kind: 'record', id: 31, paths: [['checkedValue'], ['reason']] },
        },
      ]);
    deciderSpec(validationResultDecider)
      .given([{ type: 'ColumnDataValidationResultCreated', data: { validationResultId: 9, ...verdict } }])
      .when({ kind: 'Update', attributes: { valid: true, reason: null } })
      .then([
        {
          type: 'ColumnDataValidationResultUpdated',
          data: { validationResultId: 9, valid: true, reason: null },
        },
      ]);
  });

  test("erasing the record erases its verdicts' checked values and reasons, and no other record's", () => {
    const log = new EventLog();
    const result = (id: number, recordId: number) =>
      log.record(streamName('columnDataValidationResult', TEST_TENANT, id), {
        type: 'ColumnDataValidationResultCreated',
        data: { validationResultId: id, ...verdict, recordId },
      });
    const results = [result(1, 31), result(2, 32)];
    const erased = log.record(streamName('record', TEST_TENANT, 31), {
      type: 'RecordErased',
      data: { recordId: 31, moduleId: 12, spaceId: 7, reason: 'Art. 17', fields: ['email'] },
    });
    projectionSpec(validationResultsProjection)
      .given(results)
      .when(erased)
      .thenDocuments(READ_MODELS.aiValidationResults, [
        expect.objectContaining({ validationResultId: 1, checkedValue: '[erased]', reason: '[erased]' }),
        expect.objectContaining({ validationResultId: 2, checkedValue: 'ada@x.io' }),
      ] as unknown as Record<string, unknown>[]);
  });
});
