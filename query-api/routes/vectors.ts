import type { Request, Router } from 'express';
import { contextRecords, outlierRecords, similarRecords } from '../../contracts/api/vectors';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { PlatformError } from '../../contracts/errors';
import { parseFilter } from '../../languages/filter/parse';
import type { StoreFilter } from '../../languages/filter/store-query';
import {
  parseVectorParams,
  type VectorParams,
  type VectorSearchKind,
} from '../../contracts/query/vector-params';
import { EmbeddingUnavailableError } from '../../infra/ai/embeddings/port';
import { mount } from '../../infra/http/operations';
import { sendJson } from '../../infra/http/respond';
import type { Document } from '../../contracts/read-model-changes';
import { VectorIndexUnavailableError, type VectorHit } from '../../infra/vector-index/port';
import { awaitConsistency } from '../consistency';
import { recordView } from '../representations';
import { authorize, type EntityReadDeps } from './entities';
import { VECTOR_PROJECTION } from '../../projections/vectors/vector-projection';
import { liveRecordIdsMatching } from '../records/search';
import type { SemanticSearch } from '../records/semantic-search';

export interface VectorReadDeps extends EntityReadDeps {
  /** Absent: semantic search is switched off, and its routes answer 503. */
  readonly semantic?: SemanticSearch;
}

interface Found {
  readonly tenant: string;
  readonly params: VectorParams;
  readonly hits: readonly VectorHit[];
  readonly records: ReadonlyMap<number, Document>;
  readonly searched: number;
  readonly segmentName?: string;
  readonly identity: string;
}

/** Runs one semantic search: checks, the filter or segment, the query's vector, the ranking, the records. */
async function search(req: Request, deps: VectorReadDeps, kind: VectorSearchKind): Promise<Found> {
  const tenant = authorize(req, 'record', 'read');
  authorize(req, 'space', 'read');
  const params = parseVectorParams(req.query, kind);
  const semantic = deps.semantic;
  if (!semantic)
    throw new PlatformError(
      'unavailable',
      'semantic search is switched off on this platform (SEMANTIC_SEARCH=false)',
    );
  // The records as they stand after the caller's writes; the vectors too when the caller asks (X-Min-Position).
  const waits = ['records', 'spaces', 'segments', 'fields'];
  if (req.headers['x-min-position'] !== undefined) waits.push(VECTOR_PROJECTION);
  await awaitConsistency(req, deps.consistency, waits);
  const space = await deps.readModels.get(tenant, READ_MODELS.spaces, documentId(tenant, params.spaceId));
  if (!space) throw new PlatformError('not_found', `space ${params.spaceId} not found`);
  let segmentName: string | undefined;
  let savedFilter;
  if (params.segmentId !== undefined) {
    const segment = await deps.readModels.get(
      tenant,
      READ_MODELS.segments,
      documentId(tenant, params.segmentId),
    );
    if (!segment) throw new PlatformError('not_found', `segment ${params.segmentId} not found`);
    if (Number(segment.spaceId) !== params.spaceId)
      throw new PlatformError(
        'validation_failed',
        `segment ${params.segmentId} belongs to space ${String(segment.spaceId)}, not to space ${params.spaceId}`,
      );
    segmentName = String(segment.name ?? '');
    savedFilter = typeof segment.filter === 'string' ? parseFilter(segment.filter) : undefined;
  }
  const candidates =
    params.filter !== undefined || savedFilter !== undefined
      ? await liveRecordIdsMatching(deps, tenant, params.spaceId, {
          ...(params.filter && { request: params.filter }),
          ...(savedFilter && { saved: savedFilter }),
        })
      : null;
  let vector: Float32Array;
  try {
    [vector] = (await semantic.embedder.embed([params.query])) as [Float32Array];
  } catch (error) {
    if (error instanceof EmbeddingUnavailableError)
      throw new PlatformError('unavailable', `the embedding model did not answer: ${error.message}`);
    throw error;
  }
  const [hits, searched] = await fromIndex(async () => [
    candidates !== null && candidates.size === 0
      ? []
      : await semantic.index.search({
          tenant,
          spaceId: params.spaceId,
          vector,
          limit: params.limit,
          order: kind === 'outliers' ? 'farthest' : 'nearest',
          records: candidates,
          modules: null,
          ...(params.minSimilarity !== undefined && { minSimilarity: params.minSimilarity }),
          ...(params.maxDistance !== undefined && { minDistance: params.maxDistance }),
        }),
    await semantic.index.count(tenant, params.spaceId),
  ]);
  const records = await recordsById(
    deps,
    tenant,
    hits.map((hit) => hit.recordId),
  );
  return {
    tenant,
    params,
    // A record deleted since its vectors were written is not shown.
    hits: hits.filter((hit) => records.has(hit.recordId)),
    records,
    searched,
    ...(segmentName !== undefined && { segmentName }),
    identity: semantic.identity,
  };
}

/** What the vector index answers; while its server is away, a 503 that says so. */
async function fromIndex<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof VectorIndexUnavailableError)
      throw new PlatformError('unavailable', `the vector index did not answer: ${error.message}`);
    throw error;
  }
}

/** The live records of these ids, read a page at a time. */
async function recordsById(
  deps: EntityReadDeps,
  tenant: string,
  ids: readonly number[],
): Promise<Map<number, Document>> {
  const found = new Map<number, Document>();
  for (let start = 0; start < ids.length; start += 1000) {
    const page = ids.slice(start, start + 1000);
    const filter: StoreFilter = {
      kind: 'and',
      children: [
        { kind: 'compare', path: 'status', op: 'eq', value: 'live' },
        { kind: 'in', path: 'recordId', values: page, numeric: true },
      ],
    };
    const { items } = await deps.readModels.find(tenant, READ_MODELS.records, {
      filter,
      limit: page.length,
      withTotal: false,
    });
    for (const doc of items) found.set(Number(doc.recordId), doc);
  }
  return found;
}

function metaOf(found: Found, total: number) {
  return {
    spaceId: found.params.spaceId,
    limit: found.params.limit,
    total,
    searched: found.searched,
    model: found.identity,
  };
}

/** The custom fields of the records found, by module: names and ids for the short notation. */
async function fieldNames(
  deps: EntityReadDeps,
  tenant: string,
  moduleIds: readonly number[],
): Promise<Map<string, { fieldId: number; name: string }>> {
  if (moduleIds.length === 0) return new Map();
  const { items } = await deps.readModels.find(tenant, READ_MODELS.fields, {
    filter: { kind: 'in', path: 'moduleId', values: [...moduleIds], numeric: true },
    limit: 10_000,
    withTotal: false,
  });
  return new Map(
    items.map((doc) => [
      `${String(doc.moduleId)}.${String(doc.key)}`,
      { fieldId: Number(doc.fieldId), name: String(doc.name) },
    ]),
  );
}

/** `/record/vector/similar`, `/outliers` and `/context`. */
export function addVectorRoutes(router: Router, deps: VectorReadDeps): void {
  mount(router, similarRecords, async (req, res) => {
    const found = await search(req, deps, 'similar');
    const items = found.hits.map((hit) => ({
      ...recordView(found.records.get(hit.recordId)!),
      similarity: hit.similarity,
    }));
    sendJson(res, 200, { items, meta: metaOf(found, items.length) });
  });

  mount(router, outlierRecords, async (req, res) => {
    const found = await search(req, deps, 'outliers');
    const items = found.hits.map((hit) => ({
      ...recordView(found.records.get(hit.recordId)!),
      distance: Math.min(2, Math.max(0, 1 - hit.similarity)),
    }));
    sendJson(res, 200, { items, meta: metaOf(found, items.length) });
  });

  mount(router, contextRecords, async (req, res) => {
    const found = await search(req, deps, 'context');
    const docs = found.hits.map((hit) => found.records.get(hit.recordId)!);
    const names = await fieldNames(deps, found.tenant, [...new Set(docs.map((doc) => Number(doc.moduleId)))]);
    const items = found.hits.map((hit) => {
      const doc = found.records.get(hit.recordId)!;
      const view = recordView(doc);
      const values = Object.entries((doc.fields as Record<string, unknown>) ?? {});
      return {
        id: view.id,
        name: view.name,
        moduleId: view.moduleId,
        similarity: hit.similarity,
        labelIds: view.labelIds,
        customFields: values.flatMap(([key, value]) => {
          const field = names.get(`${String(doc.moduleId)}.${key}`);
          return field
            ? [
                {
                  value,
                  id: `${String(view.id)}.${key}`,
                  created: view.createdAt,
                  updated: view.updatedAt,
                  customFieldInputId: field.fieldId,
                  customFieldInputName: field.name,
                },
              ]
            : [];
        }),
        ...(found.segmentName !== undefined && { fromSegment: found.segmentName }),
        createdAt: view.createdAt,
        updatedAt: view.updatedAt,
      };
    });
    sendJson(res, 200, { items, meta: metaOf(found, items.length) });
  });
}
