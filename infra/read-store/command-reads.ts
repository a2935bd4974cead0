import type { CommandReads } from '../../command-api/deps';
import { documentId, PROJECTION_OF_READ_MODEL, READ_MODELS } from '../../contracts/read-models';
import { equals, type StoreFilter } from '../../contracts/query/store-query';
import { namedFieldsFilter, recordFieldDefinitionOf } from '../../contracts/query/record-fields';
import type { ReadModels } from './read-models';

/**
 * The command side's reads of the read models. `ownWritesApplied(projections)` resolves once those
 * projections include every write this process made, so a command sees what the commands before it did.
 */
export function readModelCommandReads(
  readModels: ReadModels,
  ownWritesApplied: (projections: readonly string[]) => Promise<void>,
): CommandReads {
  const countWhere = async (
    tenant: string,
    base: string,
    path: string,
    value: number,
    also?: StoreFilter,
  ): Promise<number> => {
    await ownWritesApplied([PROJECTION_OF_READ_MODEL[base] ?? base]);
    const match = equals(path, value);
    return readModels.count(tenant, base, also ? { kind: 'and', children: [match, also] } : match);
  };
  return {
    async fieldModule(tenant, fieldId) {
      await ownWritesApplied([PROJECTION_OF_READ_MODEL[READ_MODELS.fields]!]);
      const field = await readModels.get(tenant, READ_MODELS.fields, documentId(tenant, fieldId));
      return typeof field?.moduleId === 'number' ? field.moduleId : null;
    },
    // Soft-deleted records do not hold their module: a restore checks that the module still exists.
    recordsInModule: (tenant, moduleId) =>
      countWhere(tenant, READ_MODELS.records, 'moduleId', moduleId, equals('status', 'live')),
    modulesInSpace: (tenant, spaceId) => countWhere(tenant, READ_MODELS.modules, 'spaceId', spaceId),
    modulesOfTemplate: (tenant, spaceId, template) =>
      countWhere(tenant, READ_MODELS.modules, 'spaceId', spaceId, equals('template', template)),
    async recordFieldsOfSpace(tenant, spaceId, { keys, fieldIds }) {
      const named = namedFieldsFilter(keys, fieldIds);
      if (!named) return [];
      await ownWritesApplied([PROJECTION_OF_READ_MODEL[READ_MODELS.fields]!]);
      const { items } = await readModels.find(tenant, READ_MODELS.fields, {
        filter: { kind: 'and', children: [equals('spaceId', spaceId), named] },
        limit: 10_000,
        withTotal: false,
      });
      return items.flatMap((doc) => recordFieldDefinitionOf(doc) ?? []);
    },
    async liveGrantsOf(tenant, userId) {
      await ownWritesApplied([PROJECTION_OF_READ_MODEL[READ_MODELS.oauthGrants]!]);
      const { items } = await readModels.find(tenant, READ_MODELS.oauthGrants, {
        filter: {
          kind: 'and',
          children: [equals('userId', userId), { kind: 'in', path: 'status', values: ['issued', 'active'] }],
        },
        limit: 10_000,
        withTotal: false,
      });
      return items.map((grant) => String(grant.grantId));
    },
  };
}
