import { z } from 'zod';
import type { SegmentEvent } from '../../contracts/events/records';
import { parseFilter, parseOrder } from '../../contracts/query/parse';
import { RECORD_FIELDS } from '../../contracts/query/record-fields';
import { resolveFilter, resolveOrder } from '../../contracts/query/resolve';
import { streamName } from '../../contracts/streams';
import { segmentDecider, type SegmentCommand, type SegmentState } from '../domain/segment';
import { spaceDecider } from '../domain/space';
import type { CommandDeps } from '../deps';
import type { Resource } from './resource';

const id = z.number().int().positive();
const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const listText = z.string().trim().max(4000, 'must be at most 4000 characters').nullable();

const createSegment = z.strictObject({
  spaceId: id,
  name,
  filter: listText.optional(),
  order: listText.optional(),
});
const updateSegment = z.strictObject({
  id: id.optional(),
  name: name.optional(),
  filter: listText.optional(),
  order: listText.optional(),
});

/**
 * A segment's filter and order are checked as a record list would check them (a syntax error is a 400 that
 * names the position), so a saved segment always runs. Empty text means none.
 */
function checkedListText(
  text: string | null | undefined,
  parse: 'filter' | 'order',
): string | null | undefined {
  if (text === undefined || text === null) return text;
  if (text === '') return null;
  if (parse === 'filter') resolveFilter(parseFilter(text), RECORD_FIELDS);
  else resolveOrder(parseOrder(text), RECORD_FIELDS);
  return text;
}

/** Saved segments: a named filter of one space's records, for lists and (later) semantic search. */
export function segmentResource(
  deps: CommandDeps,
): Resource<
  SegmentState,
  SegmentCommand,
  SegmentEvent,
  z.infer<typeof createSegment>,
  z.infer<typeof updateSegment>
> {
  return {
    noun: 'segment',
    idParam: 'segmentId',
    decider: segmentDecider,
    createBody: createSegment,
    updateBody: updateSegment,
    async prepareCreate(body, tenant) {
      const filter = checkedListText(body.filter, 'filter') ?? null;
      const order = checkedListText(body.order, 'order') ?? null;
      const space = await deps.handler.load(streamName('space', tenant, body.spaceId), spaceDecider);
      return (segmentId) => ({
        kind: 'CreateSegment',
        segmentId,
        spaceId: body.spaceId,
        spaceExists: space.state.status === 'active',
        name: body.name,
        filter,
        order,
      });
    },
    async prepareUpdate(body) {
      const filter = checkedListText(body.filter, 'filter');
      const order = checkedListText(body.order, 'order');
      return {
        kind: 'UpdateSegment',
        ...(body.name !== undefined && { name: body.name }),
        ...(filter !== undefined && { filter }),
        ...(order !== undefined && { order }),
      };
    },
    prepareDelete: async () => ({ kind: 'DeleteSegment' }),
    view: (state) => ({
      id: state.segmentId,
      spaceId: state.spaceId,
      name: state.name,
      filter: state.filter,
      order: state.order,
    }),
  };
}
