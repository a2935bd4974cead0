import { pathOfKey, type IndexSpec, type IntervalKeys } from '../../contracts/read-model-changes';
import type { StoreFilter } from '../../languages/filter/store-query';
import { compileFilter, valueExpression, type SqlFragment } from './sqlite-query';
import { assertIntervalPoint } from './validation';

/**
 * Interval indexes on SQLite (`IntervalKeys`): a relational interval tree (Kriegel, Pötke and Seidl,
 * "Managing Intervals Efficiently in Object-Relational Databases", VLDB 2000) over the integers. The nodes
 * of its virtual binary tree are the positive integers, a node with k trailing zero bits sitting k levels
 * above the leaves; an interval belongs to its fork node, the node within it nearest the root (the one
 * with the most trailing zeros). Every interval that holds a point p has its fork on p's path to the root,
 * and at a node of that path after p such an interval holds p exactly when it begins at or before p; at
 * one before p, when it ends after p. So one index by (node, lower bound) and one by (node, upper bound)
 * find exactly the intervals that hold p, with one range per node of the path: a count visits only what
 * it counts. An interval still open (no upper bound) sits at node -1 and is found by its lower bound; one
 * whose fork is 0 (it begins at 0, which has the most trailing zeros of all) by its upper bound.
 */

/** An index spec that is an interval index, as the store's registry of them keeps it. */
export type IntervalIndex = IndexSpec & { readonly interval: IntervalKeys };

/** Which of the two SQLite indexes of an interval index: by the lower bound, or by the upper. */
export type IntervalBound = 'from' | 'to';

export const INTERVAL_BOUNDS: readonly IntervalBound[] = ['from', 'to'];

/** Where an interval still open sits; below every node of the tree. */
const OPEN_NODE = -1;
/** Pads the lists of nodes to one length (no interval sits there), so one statement serves every point. */
const NO_NODE = -2;
/** Points are safe integers: below 2^53, so a path to the root has 53 nodes. */
const LEVELS = 53;

/**
 * The fork node of the document's interval [from, to): `to` − 1 is its last point. SQLite's built-ins only,
 * so every connection maintains the index without a registered function: the highest bit where the bounds
 * differ comes from `log2` (math functions are built into better-sqlite3's SQLite), corrected by one where
 * the float rounds up near a power of two. NULL (indexed nowhere) for an empty or reversed interval and
 * for a missing lower bound.
 */
export function intervalNodeExpression({ from, to }: Pick<IntervalKeys, 'from' | 'to'>): string {
  const lower = valueExpression(from);
  const end = valueExpression(to);
  const last = `(${end} - 1)`;
  const differing = `((${lower} | ${last}) - (${lower} & ${last}))`;
  const estimate = `CAST(log2(${differing}) AS INTEGER)`;
  const highest = `(${estimate} - ((1 << ${estimate}) > ${differing}))`;
  return (
    `(CASE WHEN ${end} IS NULL THEN ${OPEN_NODE} WHEN ${end} <= ${lower} THEN NULL ` +
    `WHEN ${lower} = ${last} THEN ${lower} ` +
    `WHEN (${lower} & ((1 << (${highest} + 1)) - 1)) = 0 THEN ${lower} ` +
    `ELSE ((${last} >> ${highest}) << ${highest}) END)`
  );
}

/** The columns of one of the two SQLite indexes: the paths, the node, the bound, `then`, and the id. */
export function intervalIndexColumns(index: IntervalIndex, bound: IntervalBound): string {
  const { interval } = index;
  return [
    ...index.paths.map((key) => valueExpression(pathOfKey(key))),
    intervalNodeExpression(interval),
    valueExpression(interval[bound]),
    ...interval.then.map(valueExpression),
    'id',
  ].join(', ');
}

/**
 * The nodes whose intervals may hold `at`, each list padded to LEVELS + 1: those at or after it (and the
 * open ones), where an interval holds it when it begins by then; and those before it (and 0, below every
 * other), where it holds it when it ends after it.
 */
export function nodesAround(at: number): Record<IntervalBound, number[]> {
  assertIntervalPoint(at);
  const byFrom = [OPEN_NODE];
  const byTo = [0];
  for (let level = 0; level < LEVELS; level++) {
    const node = Math.floor(at / 2 ** (level + 1)) * 2 ** (level + 1) + 2 ** level;
    (node >= at ? byFrom : byTo).push(node);
  }
  const padded = (nodes: number[]) => [
    ...nodes,
    ...new Array<number>(LEVELS + 1 - nodes.length).fill(NO_NODE),
  ];
  return { from: padded(byFrom), to: padded(byTo) };
}

function pathsOf(filter: StoreFilter): string[] {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return filter.children.flatMap(pathsOf);
    case 'during':
      return [filter.from, filter.to];
    default:
      return [filter.path];
  }
}

/** The conditions that must all hold, from `and`s within `and`s. */
function conjunctsOf(filter: StoreFilter): StoreFilter[] {
  return filter.kind === 'and' ? filter.children.flatMap(conjunctsOf) : [filter];
}

/** A condition the index can seek on: equality with a string or a number. */
function equalityPath(filter: StoreFilter): string | undefined {
  return filter.kind === 'compare' &&
    filter.op === 'eq' &&
    filter.list !== true &&
    (typeof filter.value === 'string' || typeof filter.value === 'number')
    ? filter.path
    : undefined;
}

/** A count the interval index answers: the index, the point, and the rest of the filter. */
export interface IntervalCount {
  readonly index: IntervalIndex;
  readonly at: number;
  readonly rest: SqlFragment;
}

/**
 * The interval index that answers a count of `filter`, if one does: the filter is one `during` on the
 * index's bounds and conditions that equal each of its paths and read only paths it holds, so that
 * counting reads the index alone. `indexesOf` is asked only for a filter with a `during`, so other counts
 * read no registry.
 */
export function intervalCountOf(
  filter: StoreFilter | undefined,
  indexesOf: () => readonly IntervalIndex[],
): IntervalCount | undefined {
  if (filter === undefined) return undefined;
  const conditions = conjunctsOf(filter);
  const periods = conditions.filter((condition) => condition.kind === 'during');
  const period = periods[0];
  if (periods.length !== 1 || period?.kind !== 'during') return undefined;
  const others = conditions.filter((condition) => condition !== period);
  const equal = new Set(others.map(equalityPath));
  const read = new Set(others.flatMap(pathsOf));
  const index = indexesOf().find(({ paths, interval }) => {
    const seeks = paths.map(pathOfKey);
    return (
      interval.from === period.from &&
      interval.to === period.to &&
      seeks.every((path) => equal.has(path)) &&
      [...read].every((path) => path === 'id' || seeks.includes(path) || interval.then.includes(path))
    );
  });
  if (index === undefined) return undefined;
  return { index, at: period.at, rest: compileFilter({ kind: 'and', children: others }) };
}

/**
 * The count as two searches, one per SQLite index of the interval index (named by `indexName`), each
 * written with `INDEXED BY`: SQLite has no statistics to tell that the node's IN list beats an equality on
 * a field. Counting stops at `countLimit` as a plain count does.
 */
export function intervalCountSql(
  table: string,
  count: IntervalCount,
  indexName: (bound: IntervalBound) => string,
  countLimit?: number,
): SqlFragment {
  const nodes = nodesAround(count.at);
  const node = intervalNodeExpression(count.index.interval);
  const placeholders = new Array<string>(LEVELS + 1).fill('?').join(', ');
  const search = (bound: IntervalBound, comparison: string) =>
    `SELECT 1 FROM ${table} INDEXED BY "${indexName(bound)}" WHERE ${count.rest.sql} ` +
    `AND ${node} IN (${placeholders}) AND ${valueExpression(count.index.interval[bound])} ${comparison} ?`;
  const limit = countLimit === undefined ? '' : ` LIMIT ${countLimit}`;
  return {
    sql: `SELECT COUNT(*) FROM (${search('from', '<=')} UNION ALL ${search('to', '>')}${limit})`,
    params: [...count.rest.params, ...nodes.from, count.at, ...count.rest.params, ...nodes.to, count.at],
  };
}
