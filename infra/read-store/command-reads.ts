import { documentId, PROJECTION_OF_READ_MODEL, READ_MODELS } from '../../contracts/read-models';
import { equals, type StoreFilter } from '../../languages/filter/store-query';
import {
  namedFieldsFilter,
  recordFieldDefinitionOf,
  type RecordFieldDefinition,
} from '../../languages/filter/record-fields';
import type { ReadModels } from './read-models';

/**
 * What commands read from the read models: facts that span aggregates. Each read first waits until the
 * read models include this process's own writes. A write of another process may still be on its way, so a
 * rule built on these reads can be raced by a concurrent command elsewhere (said where it is used).
 */
export interface CommandReads {
  /** The module that holds a field (null: no such field). */
  fieldModule(tenant: string, fieldId: number): Promise<number | null>;
  recordsInModule(tenant: string, moduleId: number): Promise<number>;
  modulesInSpace(tenant: string, spaceId: number): Promise<number>;
  /** The user's OAuth grants that still work (a code waiting, or tokens issued). */
  liveGrantsOf(tenant: string, userId: number): Promise<string[]>;
  /** The space's modules installed from built-in template `template`. */
  modulesOfTemplate(tenant: string, spaceId: number, template: string): Promise<number>;
  /** The AI transform that rewrites a field, the first saved (null: none). */
  transformOfField(tenant: string, fieldId: number): Promise<number | null>;
  /** The newest verdict of a validation on a record: its id, what it was asked, and who wrote it. */
  latestValidationResult(
    tenant: string,
    validationId: number,
    recordId: number,
  ): Promise<{ id: number; inputDigest: string | null; source: string } | null>;
  /** Execute jobs of every system not finished yet (at most `limit`): what a restarted process resumes. */
  runningAiJobs(limit: number): Promise<Array<{ tenant: string; jobId: number }>>;
  /** Modules with exactly this name (at most two: enough to tell one from several). */
  modulesNamed(tenant: string, name: string): Promise<number[]>;
  /** The definitions of the space's fields with one of these keys or ids (what a record filter names). */
  recordFieldsOfSpace(
    tenant: string,
    spaceId: number,
    named: { readonly keys: readonly string[]; readonly fieldIds: readonly number[] },
  ): Promise<RecordFieldDefinition[]>;
  /** The definitions of the system's fields, in any space, with one of these keys or ids. */
  recordFieldsOfSystem(
    tenant: string,
    named: { readonly keys: readonly string[]; readonly fieldIds: readonly number[] },
  ): Promise<RecordFieldDefinition[]>;
  /** How many subscriptions the system has. */
  subscriptionCount(tenant: string): Promise<number>;
}

/** Field keys and ids a record filter or order names. */
export interface NamedFields {
  readonly keys: readonly string[];
  readonly fieldIds: readonly number[];
}

/** The record fields with one of these keys or ids, within `scope` (a space) or in the whole system. */
export async function recordFieldsIn(
  readModels: Pick<ReadModels, 'find'>,
  tenant: string,
  { keys, fieldIds }: NamedFields,
  scope?: StoreFilter,
): Promise<RecordFieldDefinition[]> {
  const named = namedFieldsFilter(keys, fieldIds);
  if (!named) return [];
  const { items } = await readModels.find(tenant, READ_MODELS.fields, {
    filter: scope ? { kind: 'and', children: [scope, named] } : named,
    limit: 10_000,
    withTotal: false,
  });
  return items.flatMap((doc) => recordFieldDefinitionOf(doc) ?? []);
}

/**
 * The command side's reads of the read models. `ownWritesApplied(projections)` resolves once those
 * projections include every write this process made, so a command sees what the commands before it did;
 * `credentialWritesApplied()` once the credential projections include every credential write of any process
 * (a deactivation must find the grant another process issued a moment ago); `everyWriteApplied(projections)`
 * once they include every write of any process acknowledged so far (asked before a "not found").
 */
export function readModelCommandReads(
  readModels: ReadModels,
  ownWritesApplied: (projections: readonly string[]) => Promise<void>,
  credentialWritesApplied: () => Promise<void>,
  everyWriteApplied: (projections: readonly string[]) => Promise<void>,
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
  const recordFieldsNamed = async (tenant: string, named: NamedFields, scope?: StoreFilter) => {
    await ownWritesApplied([PROJECTION_OF_READ_MODEL[READ_MODELS.fields]!]);
    return recordFieldsIn(readModels, tenant, named, scope);
  };
  return {
    async fieldModule(tenant, fieldId) {
      const projections = [PROJECTION_OF_READ_MODEL[READ_MODELS.fields]!];
      const lookUp = async () => {
        const field = await readModels.get(tenant, READ_MODELS.fields, documentId(tenant, fieldId));
        return typeof field?.moduleId === 'number' ? field.moduleId : null;
      };
      await ownWritesApplied(projections);
      const found = await lookUp();
      if (found !== null) return found;
      // Another process may have added it a moment ago: "no such field" only once the read model has every write.
      await everyWriteApplied(projections);
      return lookUp();
    },
    // Soft-deleted records do not hold their module: a restore checks that the module still exists.
    recordsInModule: (tenant, moduleId) =>
      countWhere(tenant, READ_MODELS.records, 'moduleId', moduleId, equals('status', 'live')),
    modulesInSpace: (tenant, spaceId) => countWhere(tenant, READ_MODELS.modules, 'spaceId', spaceId),
    modulesOfTemplate: (tenant, spaceId, template) =>
      countWhere(tenant, READ_MODELS.modules, 'spaceId', spaceId, equals('template', template)),
    async transformOfField(tenant, fieldId) {
      await ownWritesApplied([PROJECTION_OF_READ_MODEL[READ_MODELS.aiTransforms]!]);
      const { items } = await readModels.find(tenant, READ_MODELS.aiTransforms, {
        filter: equals('fieldId', fieldId),
        sort: [{ path: 'transformId', direction: 'asc' }],
        limit: 1,
        withTotal: false,
      });
      return typeof items[0]?.transformId === 'number' ? items[0].transformId : null;
    },
    async latestValidationResult(tenant, validationId, recordId) {
      await ownWritesApplied([PROJECTION_OF_READ_MODEL[READ_MODELS.aiValidationResults]!]);
      const { items } = await readModels.find(tenant, READ_MODELS.aiValidationResults, {
        filter: {
          kind: 'and',
          children: [equals('validationId', validationId), equals('recordId', recordId)],
        },
        sort: [{ path: 'validationResultId', direction: 'desc' }],
        limit: 1,
        withTotal: false,
      });
      const latest = items[0];
      if (!latest) return null;
      return {
        id: Number(latest.validationResultId),
        inputDigest: typeof latest.inputDigest === 'string' ? latest.inputDigest : null,
        source: String(latest.source),
      };
    },
    async runningAiJobs(limit) {
      await ownWritesApplied([PROJECTION_OF_READ_MODEL[READ_MODELS.aiJobs]!]);
      const { items } = await readModels.findInAllTenants(READ_MODELS.aiJobs, {
        filter: equals('status', 'running'),
        limit,
        withTotal: false,
      });
      return items.map((doc) => ({ tenant: String(doc.tenant), jobId: Number(doc.jobId) }));
    },
    async modulesNamed(tenant, name) {
      await ownWritesApplied([PROJECTION_OF_READ_MODEL[READ_MODELS.modules]!]);
      const { items } = await readModels.find(tenant, READ_MODELS.modules, {
        filter: equals('name', name),
        limit: 2,
        withTotal: false,
      });
      return items.map((doc) => Number(doc.moduleId));
    },
    recordFieldsOfSpace: (tenant, spaceId, named) =>
      recordFieldsNamed(tenant, named, equals('spaceId', spaceId)),
    recordFieldsOfSystem: (tenant, named) => recordFieldsNamed(tenant, named),
    async subscriptionCount(tenant) {
      await ownWritesApplied([PROJECTION_OF_READ_MODEL[READ_MODELS.subscriptions]!]);
      return readModels.count(tenant, READ_MODELS.subscriptions);
    },
    async liveGrantsOf(tenant, userId) {
      await credentialWritesApplied();
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
