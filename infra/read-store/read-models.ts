import {
  PROJECTION_OF_READ_MODEL,
  PROJECTION_VERSIONS_COLLECTION,
  type ProjectionVersionDoc,
  versionedCollection,
} from '../../contracts/read-models';
import type { StoreFilter, StoreQuery } from '../../languages/filter/store-query';
import type { FindResult, ReadStore } from './port';
import type { Document } from '../../contracts/read-model-changes';

/**
 * Read access to the read models, always scoped to one tenant, through the active version of each
 * projection (refreshed every second, so a rebuild's switch is picked up without a restart).
 */
export class ReadModels {
  private versions = new Map<string, number>();
  private refreshedAt = 0;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly store: ReadStore,
    private readonly refreshMs = 1000,
  ) {}

  private async collection(base: string): Promise<string> {
    if (Date.now() - this.refreshedAt > this.refreshMs) {
      this.refreshing ??= this.refresh().finally(() => (this.refreshing = undefined));
      await this.refreshing;
    }
    const projection = PROJECTION_OF_READ_MODEL[base] ?? base;
    return versionedCollection(base, this.versions.get(projection) ?? 1);
  }

  private async refresh(): Promise<void> {
    const { items } = await this.store.find(PROJECTION_VERSIONS_COLLECTION, {
      limit: 1000,
      withTotal: false,
    });
    this.versions = new Map(
      items.map((item) => [item.id, (item as unknown as ProjectionVersionDoc).activeVersion]),
    );
    this.refreshedAt = Date.now();
  }

  async get(tenant: string, base: string, id: string): Promise<Document | null> {
    const doc = await this.store.get(await this.collection(base), id);
    return doc && doc.tenant === tenant ? doc : null;
  }

  async find(tenant: string, base: string, query: StoreQuery): Promise<FindResult> {
    return this.store.find(
      await this.collection(base),
      { ...query, filter: scoped(tenant, query.filter) },
      { lane: tenant },
    );
  }

  /**
   * The ids (`idKey`, an integer) of the documents matching `filter`, in ascending order, a page at a time:
   * each page seeks past the last id of the one before, so no page skips over the ones read.
   */
  async *idPages(
    tenant: string,
    base: string,
    idKey: string,
    filter: StoreFilter | undefined,
    pageSize = 1000,
  ): AsyncGenerator<number[]> {
    let after = 0;
    for (;;) {
      const seek: StoreFilter = { kind: 'compare', path: idKey, op: 'gt', value: after, numeric: true };
      const { items } = await this.find(tenant, base, {
        filter: filter ? { kind: 'and', children: [filter, seek] } : seek,
        sort: [{ path: idKey, direction: 'asc' }],
        limit: pageSize,
        withTotal: false,
      });
      const ids = items.map((doc) => Number(doc[idKey]));
      if (ids.length > 0) yield ids;
      if (ids.length < pageSize) return;
      after = ids[ids.length - 1]!;
    }
  }

  /** Documents of every tenant: for the platform's own time-driven jobs, never for a request. */
  async findInAllTenants(base: string, query: StoreQuery): Promise<FindResult> {
    return this.store.find(await this.collection(base), query);
  }

  /**
   * Removes documents a retention rule expired. The read models stay derived: a rebuild brings them back
   * until the rule's next sweep. `position` is the event store's head, newer than any change they had.
   */
  async expire(base: string, ids: readonly string[], position: bigint): Promise<void> {
    const collection = await this.collection(base);
    await this.store.apply(ids.map((id) => ({ op: 'delete' as const, collection, id, position })));
  }

  async count(tenant: string, base: string, filter?: StoreFilter): Promise<number> {
    return this.store.count(
      await this.collection(base),
      { filter: scoped(tenant, filter) },
      { lane: tenant },
    );
  }
}

function scoped(tenant: string, filter: StoreFilter | undefined): StoreFilter {
  const scope: StoreFilter = { kind: 'compare', path: 'tenant', op: 'eq', value: tenant };
  return filter ? { kind: 'and', children: [scope, filter] } : scope;
}
