import {
  createStructureBody,
  STRUCTURE_OPERATIONS,
  updateStructureBody,
} from '../../../contracts/api/integrator';
import type { DataStructure } from '../../../languages/data-structure';
import { PlatformError } from '../../../contracts/errors';
import { streamName } from '../../../contracts/streams';
import { attributesDecider, DATA_STRUCTURE } from '../../kit/attributes';
import type { AggregateLoader } from '../../kit/handler';
import { attributesResource } from '../../kit/attributes-resource';

export const dataStructureDecider = attributesDecider(DATA_STRUCTURE);

/** Reusable data structures: a name and typed fields, which hooks bound to one validate their requests by. */
export function dataStructureResource() {
  return attributesResource({
    entity: DATA_STRUCTURE,
    idParam: 'dataStructureId',
    operations: STRUCTURE_OPERATIONS,
    createBody: createStructureBody,
    updateBody: updateStructureBody,
    checkCreate: async (body) => ({ name: body.name, fields: body.fields }),
    checkUpdate: async (body) => body,
  });
}

/** The structure `dataStructureId` as it is now; null when it was deleted or never was. */
export async function currentStructure(
  aggregates: AggregateLoader,
  tenant: string,
  dataStructureId: number,
): Promise<DataStructure | null> {
  const { state } = await aggregates.load(
    streamName('dataStructure', tenant, dataStructureId),
    dataStructureDecider,
  );
  return state.status === 'active' ? { fields: state.attributes.fields as DataStructure['fields'] } : null;
}

/** Refuses a hook setting that names a data structure this system does not have. */
export async function assertStructureExists(
  aggregates: AggregateLoader,
  tenant: string,
  dataStructureId: number | null | undefined,
): Promise<void> {
  if (dataStructureId === null || dataStructureId === undefined) return;
  if ((await currentStructure(aggregates, tenant, dataStructureId)) === null)
    throw new PlatformError('validation_failed', `no data structure ${dataStructureId}`, [
      { path: 'dataStructureId', message: 'no such data structure' },
    ]);
}
