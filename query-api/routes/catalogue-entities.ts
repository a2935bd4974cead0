import type { Router } from 'express';
import { READ_MODELS } from '../../contracts/read-models';
import {
  CATEGORY_OPERATIONS,
  FIELD_GROUP_OPERATIONS,
  listFieldGroupInputs,
  listTeamUsers,
  MENU_OPERATIONS,
  TEAM_OPERATIONS,
} from '../../contracts/api/catalogue';
import { mount } from '../../infra/http/operations';
import { idParam } from '../../infra/http/params';
import { sendJson } from '../../infra/http/respond';
import { attributesView, userView } from '../representations';
import { CATEGORY_FIELDS, FIELD_GROUP_FIELDS, MENU_FIELDS, TEAM_FIELDS, USER_FIELDS } from './catalogues';
import { addEntityRoutes, readOne, readPage, type EntityDescription, type EntityReadDeps } from './entities';

function attributesEntity(
  noun: string,
  module: string,
  collection: string,
  projection: string,
  idKey: string,
  fields: EntityDescription['fields'],
): EntityDescription {
  return { module, collection, projection, fields, view: attributesView(idKey), noun };
}

const CATEGORIES = attributesEntity(
  'category',
  'category',
  READ_MODELS.categories,
  'categories',
  'categoryId',
  CATEGORY_FIELDS,
);
const TEAMS = attributesEntity('team', 'team', READ_MODELS.teams, 'teams', 'teamId', TEAM_FIELDS);
const MENUS = attributesEntity('menu', 'menu', READ_MODELS.menus, 'menus', 'menuId', MENU_FIELDS);
const FIELD_GROUPS = attributesEntity(
  'field group',
  'fieldGroup',
  READ_MODELS.fieldGroups,
  'field-groups',
  'fieldGroupId',
  FIELD_GROUP_FIELDS,
);
const USERS: EntityDescription = {
  module: 'user',
  collection: READ_MODELS.users,
  projection: 'identity',
  fields: USER_FIELDS,
  view: userView,
  noun: 'user',
};

/**
 * Categories, teams (and a team's users), menus, and field groups (and a group's fields as form inputs, in
 * the group's order).
 */
export function addCatalogueReadRoutes(
  router: Router,
  deps: EntityReadDeps,
  fields: EntityDescription,
): void {
  addEntityRoutes(router, deps, CATEGORY_OPERATIONS, 'categoryId', CATEGORIES);

  mount(router, listTeamUsers, async (req, res) => {
    const { body: team } = await readOne(req, deps, TEAMS, idParam(req, 'teamId'));
    const userIds = (team.userIds as number[] | undefined) ?? [];
    sendJson(res, 200, await readPage(req, deps, USERS, { kind: 'in', path: 'userId', values: userIds }));
  });
  addEntityRoutes(router, deps, TEAM_OPERATIONS, 'teamId', TEAMS);

  addEntityRoutes(router, deps, MENU_OPERATIONS, 'menuId', MENUS);

  mount(router, listFieldGroupInputs, async (req, res) => {
    const { body: group } = await readOne(req, deps, FIELD_GROUPS, idParam(req, 'groupId'));
    const fieldIds = (group.fieldIds as number[] | undefined) ?? [];
    const page = await readPage(req, deps, fields, { kind: 'in', path: 'fieldId', values: fieldIds });
    const items = page.items as Array<Record<string, unknown>>;
    const inGroupOrder = fieldIds
      .map((fieldId) => items.find((field) => field.id === fieldId))
      .filter((field) => field !== undefined);
    sendJson(res, 200, { fieldGroupId: group.id, items: inGroupOrder, meta: page.meta });
  });
  addEntityRoutes(router, deps, FIELD_GROUP_OPERATIONS, 'fieldGroupId', FIELD_GROUPS);
}
