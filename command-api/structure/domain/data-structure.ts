import { attributesDecider, DATA_STRUCTURE } from '../../kit/attributes';

/** A reusable data structure: a name and typed fields, which hooks bound to one validate their requests by. */
export const dataStructureDecider = attributesDecider(DATA_STRUCTURE);
