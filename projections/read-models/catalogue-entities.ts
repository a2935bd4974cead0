import { READ_MODELS } from '../../contracts/read-models';
import type { IndexSpec } from '../../contracts/read-model-changes';
import { entityProjection, setAllBut } from './entity';

/**
 * Entities made of attributes (labels, segments, categories, teams, menus, field groups): one document per
 * entity, its attributes as they are, from `<Prefix>Created`, `<Prefix>Updated` and `<Prefix>Deleted`.
 */
export function attributesProjection(options: {
  name: string;
  category: string;
  collection: string;
  eventPrefix: string;
  idKey: string;
  indexes: readonly IndexSpec[];
}) {
  const { eventPrefix, idKey } = options;
  return entityProjection({
    name: options.name,
    category: options.category,
    collection: options.collection,
    indexes: options.indexes,
    idKey,
    created: `${eventPrefix}Created`,
    deleted: `${eventPrefix}Deleted`,
    patches: { [`${eventPrefix}Updated`]: setAllBut(idKey) },
  });
}

export const labelsProjection = attributesProjection({
  name: 'labels',
  category: 'label',
  collection: READ_MODELS.labels,
  eventPrefix: 'Label',
  idKey: 'labelId',
  indexes: [
    { name: 'tenant_label', paths: ['tenant', 'labelId'] },
    { name: 'tenant_label_name', paths: ['tenant', 'name'] },
  ],
});

export const segmentsProjection = attributesProjection({
  name: 'segments',
  category: 'segment',
  collection: READ_MODELS.segments,
  eventPrefix: 'Segment',
  idKey: 'segmentId',
  indexes: [
    { name: 'tenant_segment', paths: ['tenant', 'segmentId'] },
    { name: 'tenant_space_segment', paths: ['tenant', 'spaceId', 'segmentId'] },
  ],
});

export const categoriesProjection = attributesProjection({
  name: 'categories',
  category: 'category',
  collection: READ_MODELS.categories,
  eventPrefix: 'Category',
  idKey: 'categoryId',
  indexes: [{ name: 'tenant_categoryId', paths: ['tenant', 'categoryId'] }],
});

export const teamsProjection = attributesProjection({
  name: 'teams',
  category: 'team',
  collection: READ_MODELS.teams,
  eventPrefix: 'Team',
  idKey: 'teamId',
  indexes: [{ name: 'tenant_teamId', paths: ['tenant', 'teamId'] }],
});

export const menusProjection = attributesProjection({
  name: 'menus',
  category: 'menu',
  collection: READ_MODELS.menus,
  eventPrefix: 'Menu',
  idKey: 'menuId',
  indexes: [{ name: 'tenant_menuId', paths: ['tenant', 'menuId'] }],
});

export const fieldGroupsProjection = attributesProjection({
  name: 'field-groups',
  category: 'fieldGroup',
  collection: READ_MODELS.fieldGroups,
  eventPrefix: 'FieldGroup',
  idKey: 'fieldGroupId',
  indexes: [
    { name: 'tenant_fieldGroupId', paths: ['tenant', 'fieldGroupId'] },
    { name: 'tenant_moduleId_position', paths: ['tenant', 'moduleId', 'position'] },
  ],
});
