import {
  CATEGORY_OPERATIONS,
  createCategoryBody,
  createFieldGroupBody,
  createMenuBody,
  createTeamBody,
  FIELD_GROUP_OPERATIONS,
  MENU_OPERATIONS,
  TEAM_OPERATIONS,
  updateCategoryBody,
  updateFieldGroupBody,
  updateMenuBody,
  updateTeamBody,
} from '../../../contracts/api/catalogue';
import { CATEGORY, FIELD_GROUP, MENU, TEAM } from '../../kit/attributes';
import type { CommandDeps } from '../../deps';
import { attributesResource } from '../../kit/attributes-resource';
import { catalogueChecks } from '../commands';

/** Categories, teams, menus and field groups as REST resources; `catalogueChecks` checks their references. */
export function catalogueResources(deps: CommandDeps) {
  const checks = catalogueChecks(deps);
  return {
    category: attributesResource({
      entity: CATEGORY,
      idParam: 'categoryId',
      operations: CATEGORY_OPERATIONS,
      createBody: createCategoryBody,
      updateBody: updateCategoryBody,
      ...checks.category,
    }),
    team: attributesResource({
      entity: TEAM,
      idParam: 'teamId',
      operations: TEAM_OPERATIONS,
      createBody: createTeamBody,
      updateBody: updateTeamBody,
      ...checks.team,
    }),
    menu: attributesResource({
      entity: MENU,
      idParam: 'menuId',
      operations: MENU_OPERATIONS,
      createBody: createMenuBody,
      updateBody: updateMenuBody,
      ...checks.menu,
    }),
    fieldGroup: attributesResource({
      entity: FIELD_GROUP,
      idParam: 'fieldGroupId',
      operations: FIELD_GROUP_OPERATIONS,
      createBody: createFieldGroupBody,
      updateBody: updateFieldGroupBody,
      ...checks.fieldGroup,
    }),
  };
}
