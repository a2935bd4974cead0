import { z } from 'zod';
import { PlatformError } from '../../contracts/errors';
import { parseFilter, parseOrder } from '../../contracts/query/parse';
import { SAVED_RECORD_FIELDS } from '../../contracts/query/record-fields';
import { resolveFilter, resolveOrder } from '../../contracts/query/resolve';
import { streamName } from '../../contracts/streams';
import { SEGMENT } from '../domain/attributes';
import { spaceDecider } from '../domain/space';
import type { CommandDeps } from '../deps';
import { attributesResource, updateOf } from './attributes-resource';

const id = z.number().int().positive();
const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const listText = z.string().trim().max(4000, 'must be at most 4000 characters').nullable();

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
  if (parse === 'filter') resolveFilter(parseFilter(text), SAVED_RECORD_FIELDS);
  else resolveOrder(parseOrder(text), SAVED_RECORD_FIELDS);
  return text;
}

/** Saved segments: a named filter (and order) of one space's records, for lists and semantic search. */
export function segmentResource(deps: CommandDeps) {
  return attributesResource({
    entity: SEGMENT,
    idParam: 'segmentId',
    createBody: z.strictObject({
      spaceId: id,
      name,
      filter: listText.optional(),
      order: listText.optional(),
    }),
    // A segment stays in its space.
    updateBody: updateOf({ name, filter: listText, order: listText }),
    async checkCreate(body, tenant) {
      const filter = checkedListText(body.filter, 'filter') ?? null;
      const order = checkedListText(body.order, 'order') ?? null;
      const space = await deps.handler.load(streamName('space', tenant, body.spaceId), spaceDecider);
      if (space.state.status !== 'active')
        throw new PlatformError('validation_failed', `space ${body.spaceId} does not exist`, [
          { path: 'spaceId', message: 'no such space' },
        ]);
      return { spaceId: body.spaceId, name: body.name, filter, order };
    },
    async checkUpdate(body) {
      const filter = checkedListText(body.filter, 'filter');
      const order = checkedListText(body.order, 'order');
      return {
        ...(body.name !== undefined && { name: body.name }),
        ...(filter !== undefined && { filter }),
        ...(order !== undefined && { order }),
      };
    },
  });
}
