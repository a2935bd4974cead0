import { createSegmentBody, SEGMENT_OPERATIONS, updateSegmentBody } from '../../../contracts/api/catalogue';
import { PlatformError } from '../../../contracts/errors';
import { parseFilter, parseOrder } from '../../../languages/filter/parse';
import {
  fieldReferences,
  modulesRequiredBy,
  namesUsed,
  recordFieldCatalogue,
} from '../../../languages/filter/record-fields';
import { resolveFilter, resolveOrder } from '../../../languages/filter/resolve';
import { streamName } from '../../../contracts/streams';
import { attributesDecider, SEGMENT } from '../../kit/attributes';
import { spaceDecider } from '../../structure/domain/space';
import type { CommandDeps } from '../../deps';
import { attributesResource } from '../../kit/attributes-resource';

/**
 * A segment's filter and order are checked as a record list of its space would check them (a syntax error
 * is a 400 that names the position, a field key must name a field of the space and its values fit the
 * field), so a saved segment runs as long as the space's fields stay. Empty text means none.
 */
async function checkedListTexts(
  deps: CommandDeps,
  tenant: string,
  spaceId: number,
  texts: { readonly filter?: string | null; readonly order?: string | null },
): Promise<{ filter?: string | null; order?: string | null }> {
  const given = (text: string | null | undefined): string | null | undefined => (text === '' ? null : text);
  const filterText = given(texts.filter);
  const orderText = given(texts.order);
  const filter = typeof filterText === 'string' ? parseFilter(filterText) : undefined;
  const order = typeof orderText === 'string' ? parseOrder(orderText) : undefined;
  const named = fieldReferences(namesUsed([filter], [order]));
  // As on the list: keys resolve against the modules the filter requires, if it requires some.
  const required = modulesRequiredBy(filter);
  const definitions = (await deps.reads.recordFieldsOfSpace(tenant, spaceId, named)).filter(
    (definition) => required === undefined || required.includes(definition.moduleId),
  );
  const fields = recordFieldCatalogue(definitions);
  if (filter) resolveFilter(filter, fields);
  if (order) resolveOrder(order, fields);
  return {
    ...(filterText !== undefined && { filter: filterText }),
    ...(orderText !== undefined && { order: orderText }),
  };
}

const segmentDecider = attributesDecider(SEGMENT);

/** Saved segments: a named filter (and order) of one space's records, for lists and semantic search. */
export function segmentResource(deps: CommandDeps) {
  return attributesResource({
    entity: SEGMENT,
    idParam: 'segmentId',
    operations: SEGMENT_OPERATIONS,
    createBody: createSegmentBody,
    updateBody: updateSegmentBody,
    async checkCreate(body, tenant) {
      const checked = await checkedListTexts(deps, tenant, body.spaceId, body);
      const filter = checked.filter ?? null;
      const order = checked.order ?? null;
      const space = await deps.handler.load(streamName('space', tenant, body.spaceId), spaceDecider);
      if (space.state.status !== 'active')
        throw new PlatformError('validation_failed', `space ${body.spaceId} does not exist`, [
          { path: 'spaceId', message: 'no such space' },
        ]);
      return { spaceId: body.spaceId, name: body.name, filter, order };
    },
    async checkUpdate(body, tenant, segmentId) {
      const segment = await deps.handler.load(streamName('segment', tenant, segmentId), segmentDecider);
      const spaceId = segment.state.attributes.spaceId;
      const { filter, order } =
        typeof spaceId === 'number' ? await checkedListTexts(deps, tenant, spaceId, body) : body;
      return {
        ...(body.name !== undefined && { name: body.name }),
        ...(filter !== undefined && { filter }),
        ...(order !== undefined && { order }),
      };
    },
  });
}
