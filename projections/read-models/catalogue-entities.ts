import { READ_MODELS } from '../../contracts/read-models';
import { entityProjection, setAllBut } from './entity';

/** Categories, teams, menus and field groups: one document per entity, its attributes as they are. */
function attributesProjection(
  name: string,
  category: string,
  collection: string,
  noun: string,
  idKey: string,
  scopeKey?: string,
) {
  return entityProjection({
    name,
    category,
    collection,
    indexes: [
      { name: `tenant_${idKey}`, paths: ['tenant', idKey] },
      ...(scopeKey ? [{ name: `tenant_${scopeKey}_position`, paths: ['tenant', scopeKey, 'position'] }] : []),
    ],
    idKey,
    created: `${noun}Created`,
    deleted: `${noun}Deleted`,
    patches: { [`${noun}Updated`]: setAllBut(idKey) },
  });
}

export const categoriesProjection = attributesProjection(
  'categories',
  'category',
  READ_MODELS.categories,
  'Category',
  'categoryId',
);
export const teamsProjection = attributesProjection('teams', 'team', READ_MODELS.teams, 'Team', 'teamId');
export const menusProjection = attributesProjection('menus', 'menu', READ_MODELS.menus, 'Menu', 'menuId');
export const fieldGroupsProjection = attributesProjection(
  'field-groups',
  'fieldGroup',
  READ_MODELS.fieldGroups,
  'FieldGroup',
  'fieldGroupId',
  'moduleId',
);
