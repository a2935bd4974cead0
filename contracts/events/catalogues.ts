import { z } from 'zod';
import type { EventDefinition } from './definition';

/** Categories, teams, menus and field groups: entities made of attributes (see attributesDecider). */
const id = z.number().int().positive();
const ids = z.array(id);

const categoryAttributes = {
  name: z.string(),
  description: z.string().nullable(),
  /** The parent category, or null at the top. */
  parentId: id.nullable(),
};
const teamAttributes = { name: z.string(), description: z.string().nullable(), userIds: ids };
export const menuItemSchema = z.object({
  label: z.string(),
  /** A module the item opens, or an address; at least one. */
  moduleId: id.optional(),
  url: z.string().optional(),
});
const menuAttributes = { name: z.string(), position: z.number().int(), items: z.array(menuItemSchema) };
const fieldGroupAttributes = { moduleId: id, name: z.string(), fieldIds: ids, position: z.number().int() };

/** The created, updated (attributes optional) and deleted events of one attributes entity. */
export function lifecycle(
  noun: string,
  idKey: string,
  attributes: Record<string, z.ZodType>,
  fixed: readonly string[] = [],
): EventDefinition[] {
  const changeable = Object.fromEntries(
    Object.entries(attributes)
      .filter(([key]) => !fixed.includes(key))
      .map(([key, schema]) => [key, schema.optional()]),
  );
  return [
    { type: `${noun}Created`, version: 1, schema: z.object({ [idKey]: id, ...attributes }) },
    { type: `${noun}Updated`, version: 1, schema: z.object({ [idKey]: id, ...changeable }) },
    { type: `${noun}Deleted`, version: 1, schema: z.object({ [idKey]: id }) },
  ];
}

export const CATALOGUE_EVENTS: readonly EventDefinition[] = [
  ...lifecycle('Category', 'categoryId', categoryAttributes),
  ...lifecycle('Team', 'teamId', teamAttributes),
  ...lifecycle('Menu', 'menuId', menuAttributes),
  // A field group stays in the module it was made for.
  ...lifecycle('FieldGroup', 'fieldGroupId', fieldGroupAttributes, ['moduleId']),
];
