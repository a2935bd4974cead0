import {
  createStructureBody,
  STRUCTURE_OPERATIONS,
  updateStructureBody,
} from '../../../contracts/api/integrator';
import { DATA_STRUCTURE } from '../../kit/attributes';
import { attributesResource } from '../../kit/attributes-resource';

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
