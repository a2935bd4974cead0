import type { DataStructure } from '../../languages/data-structure';
import { PlatformError } from '../../contracts/errors';
import { streamName } from '../../contracts/streams';
import type { AggregateLoader } from '../kit/handler';
import { dataStructureDecider } from './domain/data-structure';
import { moduleDecider } from './domain/module';

/** The module `moduleId` as it is now, with its fields; null when it was deleted or never was. */
export async function moduleFields(aggregates: AggregateLoader, tenant: string, moduleId: number) {
  const module = await aggregates.load(streamName('module', tenant, moduleId), moduleDecider);
  return module.state.status === 'active' ? module.state : null;
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
