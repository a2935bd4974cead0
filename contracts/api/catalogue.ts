/**
 * Labels, saved segments, categories, teams, menus and field groups: named sets of attributes, each with the
 * same list, read, create, update and delete operations, plus the reads that join them to records, users and
 * fields.
 */
import { z } from 'zod';
import { entityIdSchema } from '../entity-id';
import { operation } from './operation';
import { fieldSchema } from './fields';
import { recordPage } from './records';
import { teamMember } from './users';
import {
  auditFields,
  entityId,
  entityOperations,
  etagHeader,
  listed,
  listQuery,
  pageOf,
  pathIds,
  READ_ERRORS,
  WRITE_ERRORS,
} from './shared';

/** Makes every key optional and adds the optional body `id` of `PUT /<noun>`. */
export function updateOf<Shape extends z.ZodRawShape>(shape: Shape) {
  return z
    .strictObject({
      id: entityIdSchema.optional().meta({ description: 'The entity (when the path does not name it).' }),
    })
    .extend(z.strictObject(shape).partial().shape);
}

const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const description = z.string().max(5000, 'must be at most 5000 characters').nullable();
const uniqueIds = (what: string) =>
  z
    .array(entityIdSchema)
    .max(1000, `at most 1000 ${what}`)
    .refine((values) => new Set(values).size === values.length, `${what} must not repeat`);
const position = z.number().int().min(0).max(1_000_000).meta({ description: 'Display order, ascending.' });

// Labels

const labelName = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
const labelColor = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour as #rrggbb')
  .transform((value) => value.toLowerCase())
  .meta({ description: 'Display colour `#rrggbb` (stored in lower case).', example: '#ff8800' });
export const DEFAULT_LABEL_COLOR = '#808080';
export const createLabelBody = z
  .strictObject({
    name: labelName,
    color: labelColor.optional().meta({ description: `Default ${DEFAULT_LABEL_COLOR}.` }),
  })
  .meta({ id: 'LabelCreate' });
export const updateLabelBody = updateOf({ name: labelName, color: labelColor }).meta({ id: 'LabelUpdate' });
const labelCore = { id: entityId, name: z.string(), color: z.string() };
const label = z.object({ ...labelCore, ...auditFields }).meta({ id: 'Label' });
export const LABEL_OPERATIONS = entityOperations({
  noun: 'label',
  name: 'Label',
  plural: 'Labels',
  tag: 'labels',
  idName: 'labelId',
  createBody: createLabelBody,
  updateBody: updateLabelBody,
  written: z.object(labelCore).meta({ id: 'LabelWritten' }),
  read: label,
  deleteByBody: true,
  tools: true,
  examples: { create: { name: 'VIP', color: '#ff8800' } },
});

const recordLabelPath = pathIds({ recordId: 'The record.', labelId: 'The label.' });
const recordLabels = z
  .object({ recordId: entityId, labelIds: z.array(entityId) })
  .meta({ id: 'RecordLabels', description: 'The labels on the record after the change.' });
export const labelRecord = operation({
  operationId: 'labelRecord',
  method: 'post',
  path: '/record/{recordId}/label/{labelId}',
  tag: 'labels',
  summary: 'Put a label on a record',
  params: recordLabelPath,
  responses: {
    200: { description: 'The labels on the record.', schema: recordLabels, headers: etagHeader },
    ...WRITE_ERRORS,
  },
  security: 'token',
  tool: true,
});
export const unlabelRecord = operation({
  operationId: 'unlabelRecord',
  method: 'delete',
  path: '/record/{recordId}/label/{labelId}',
  tag: 'labels',
  summary: 'Take a label off a record',
  params: recordLabelPath,
  responses: {
    200: { description: 'The labels on the record.', schema: recordLabels, headers: etagHeader },
    ...WRITE_ERRORS,
  },
  security: 'token',
  tool: true,
});
export const listRecordLabels = operation({
  operationId: 'listRecordLabels',
  method: 'get',
  path: '/record/{recordId}/label',
  tag: 'labels',
  summary: 'List the labels on a record',
  params: pathIds({ recordId: 'The record.' }),
  query: listQuery,
  responses: {
    200: { description: 'A page of labels.', schema: pageOf(label, 'LabelPage') },
    ...READ_ERRORS,
  },
  security: 'token',
});
export const getRecordLabel = operation({
  operationId: 'getRecordLabel',
  method: 'get',
  path: '/record/{recordId}/label/{labelId}',
  tag: 'labels',
  summary: 'Read a label on a record (404 when the record does not carry it)',
  params: recordLabelPath,
  responses: { 200: { description: 'The label.', schema: label, headers: etagHeader }, ...READ_ERRORS },
  security: 'token',
});

// Segments

const listText = z.string().trim().max(4000, 'must be at most 4000 characters').nullable();
export const createSegmentBody = z
  .strictObject({
    spaceId: entityIdSchema.meta({ description: 'The space whose records the segment selects.' }),
    name,
    filter: listText
      .optional()
      .meta({ description: 'A list filter, checked as a record list of the space would.' }),
    order: listText.optional().meta({ description: 'A list order.' }),
  })
  .meta({ id: 'SegmentCreate' });
// A segment stays in its space.
export const updateSegmentBody = updateOf({ name, filter: listText, order: listText }).meta({
  id: 'SegmentUpdate',
});
const segmentCore = {
  id: entityId,
  spaceId: entityId,
  name: z.string(),
  filter: z.string().nullable(),
  order: z.string().nullable(),
};
export const SEGMENT_OPERATIONS = entityOperations({
  noun: 'segment',
  name: 'Segment',
  plural: 'Segments',
  tag: 'segments',
  idName: 'segmentId',
  createBody: createSegmentBody,
  updateBody: updateSegmentBody,
  written: z.object(segmentCore).meta({ id: 'SegmentWritten' }),
  read: z.object({ ...segmentCore, ...auditFields }).meta({ id: 'Segment' }),
  examples: { create: { spaceId: 1, name: 'Big customers', filter: 'employees>=500', order: 'name;ASC' } },
});
export const listSegmentRecords = operation({
  operationId: 'listSegmentRecords',
  method: 'get',
  path: '/segment/{segmentId}/record',
  tag: 'segments',
  summary: "List a segment's records",
  description:
    "The request's own `filter` narrows the segment further; without `order` the segment's order applies.",
  params: pathIds({ segmentId: 'The segment.' }),
  query: listQuery,
  responses: { 200: { description: 'A page of records.', schema: recordPage }, ...READ_ERRORS },
  security: 'token',
  tool: true,
});

// Categories, teams, menus, field groups

const categoryShape = { name, description, parentId: entityIdSchema.nullable() };
export const createCategoryBody = z
  .strictObject({ name, description: description.optional(), parentId: entityIdSchema.nullable().optional() })
  .meta({ id: 'CategoryCreate' });
export const updateCategoryBody = updateOf(categoryShape).meta({ id: 'CategoryUpdate' });
const categoryCore = {
  id: entityId,
  name: z.string(),
  description: z.string().nullable(),
  parentId: entityId.nullable(),
};
export const CATEGORY_OPERATIONS = entityOperations({
  noun: 'category',
  name: 'Category',
  plural: 'Categories',
  tag: 'categories',
  idName: 'categoryId',
  createBody: createCategoryBody,
  updateBody: updateCategoryBody,
  written: z.object(categoryCore).meta({ id: 'CategoryWritten' }),
  read: z.object({ ...categoryCore, ...auditFields }).meta({ id: 'Category' }),
});

const teamShape = { name, description, userIds: uniqueIds('userIds') };
export const createTeamBody = z
  .strictObject({ name, description: description.optional(), userIds: teamShape.userIds.optional() })
  .meta({ id: 'TeamCreate' });
export const updateTeamBody = updateOf(teamShape).meta({ id: 'TeamUpdate' });
const teamCore = {
  id: entityId,
  name: z.string(),
  description: z.string().nullable(),
  userIds: z.array(entityId),
};
const team = z.object({ ...teamCore, ...auditFields }).meta({ id: 'Team' });
export const TEAM_OPERATIONS = entityOperations({
  noun: 'team',
  name: 'Team',
  plural: 'Teams',
  tag: 'teams',
  idName: 'teamId',
  createBody: createTeamBody,
  updateBody: updateTeamBody,
  written: z.object(teamCore).meta({ id: 'TeamWritten' }),
  read: team,
});

const menuItem = z
  .strictObject({
    label: z.string().trim().min(1).max(200),
    moduleId: entityIdSchema.optional(),
    url: z
      .url({ protocol: /^https?$/, message: 'must be an absolute http(s) URL' })
      .max(2048)
      .optional(),
  })
  .refine(
    (item) => item.moduleId !== undefined || item.url !== undefined,
    'an item opens a moduleId or a url',
  )
  .meta({ id: 'MenuItem', description: 'An entry that opens a module or a URL.' });
const menuShape = { name, position, items: z.array(menuItem).max(200, 'at most 200 items') };
export const createMenuBody = z
  .strictObject({ name, position: position.optional(), items: menuShape.items.optional() })
  .meta({ id: 'MenuCreate' });
export const updateMenuBody = updateOf(menuShape).meta({ id: 'MenuUpdate' });
const menuCore = {
  id: entityId,
  name: z.string(),
  position: z.number().int(),
  items: z.array(z.object({ label: z.string(), moduleId: entityId.optional(), url: z.string().optional() })),
};
export const MENU_OPERATIONS = entityOperations({
  noun: 'menu',
  name: 'Menu',
  plural: 'Menus',
  tag: 'menus',
  idName: 'menuId',
  createBody: createMenuBody,
  updateBody: updateMenuBody,
  written: z.object(menuCore).meta({ id: 'MenuWritten' }),
  read: z.object({ ...menuCore, ...auditFields }).meta({ id: 'Menu' }),
});

const fieldGroupShape = { name, fieldIds: uniqueIds('fieldIds'), position };
export const createFieldGroupBody = z
  .strictObject({
    moduleId: entityIdSchema,
    name,
    fieldIds: fieldGroupShape.fieldIds.optional(),
    position: position.optional(),
  })
  .meta({ id: 'FieldGroupCreate' });
export const updateFieldGroupBody = updateOf(fieldGroupShape).meta({ id: 'FieldGroupUpdate' });
const fieldGroupCore = {
  id: entityId,
  moduleId: entityId,
  name: z.string(),
  fieldIds: z.array(entityId),
  position: z.number().int(),
};
export const FIELD_GROUP_OPERATIONS = entityOperations({
  noun: 'field-group',
  name: 'FieldGroup',
  plural: 'FieldGroups',
  tag: 'field groups',
  idName: 'fieldGroupId',
  createBody: createFieldGroupBody,
  updateBody: updateFieldGroupBody,
  written: z.object(fieldGroupCore).meta({ id: 'FieldGroupWritten' }),
  read: z.object({ ...fieldGroupCore, ...auditFields }).meta({ id: 'FieldGroup' }),
});

export const listTeamUsers = operation({
  operationId: 'listTeamUsers',
  method: 'get',
  path: '/team/{teamId}/user',
  tag: 'teams',
  summary: "List a team's users",
  params: pathIds({ teamId: 'The team.' }),
  query: listQuery,
  responses: {
    200: { description: 'A page of users.', schema: pageOf(teamMember, 'TeamMemberPage') },
    ...READ_ERRORS,
  },
  security: 'token',
});
export const listFieldGroupInputs = operation({
  operationId: 'listFieldGroupInputs',
  method: 'get',
  path: '/field-group/{groupId}/input',
  tag: 'field groups',
  summary: "A field group's fields as form inputs, in the group's order",
  params: pathIds({ groupId: 'The field group.' }),
  query: listQuery,
  responses: {
    200: {
      description: "The group's fields.",
      schema: z
        .object({
          fieldGroupId: entityId,
          items: z.array(fieldSchema),
          meta: z.object({ total: z.number().int(), offset: z.number().int(), limit: z.number().int() }),
        })
        .meta({ id: 'FieldGroupInputs' }),
    },
    ...READ_ERRORS,
  },
  security: 'token',
});

export const CATALOGUE_OPERATIONS = [
  ...listed(LABEL_OPERATIONS),
  labelRecord,
  unlabelRecord,
  listRecordLabels,
  getRecordLabel,
  ...listed(SEGMENT_OPERATIONS),
  listSegmentRecords,
  ...listed(CATEGORY_OPERATIONS),
  ...listed(TEAM_OPERATIONS),
  listTeamUsers,
  ...listed(MENU_OPERATIONS),
  ...listed(FIELD_GROUP_OPERATIONS),
  listFieldGroupInputs,
];
