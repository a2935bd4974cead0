import type { z } from 'zod';
import type {
  createCategoryBody,
  createFieldGroupBody,
  createMenuBody,
  createTeamBody,
  updateCategoryBody,
  updateFieldGroupBody,
  updateMenuBody,
  updateTeamBody,
} from '../../contracts/api/catalogue';
import { PlatformError } from '../../contracts/errors';
import { streamName } from '../../contracts/streams';
import { userDecider } from '../identity/domain/user';
import type { CommandDeps } from '../deps';
import { attributesDecider, CATEGORY, FIELD_GROUP } from '../kit/attributes';
import type { AttributesChecks } from '../kit/attributes-resource';
import type { Decider, DomainEvent } from '../kit/decider';
import { moduleDecider } from '../structure/domain/module';

const MAX_CATEGORY_DEPTH = 32;

type Body<Schema extends z.ZodType> = z.infer<Schema>;

/**
 * What the catalogue's creates and updates check: categories, teams, menus and field groups are each a set of
 * attributes whose references are checked here (a category's parent, without cycles; a team's users; a menu
 * item's module; a field group's module and fields) before the generic attributes decider rules.
 */
export function catalogueChecks(deps: Pick<CommandDeps, 'handler'>): {
  readonly category: AttributesChecks<Body<typeof createCategoryBody>, Body<typeof updateCategoryBody>>;
  readonly team: AttributesChecks<Body<typeof createTeamBody>, Body<typeof updateTeamBody>>;
  readonly menu: AttributesChecks<Body<typeof createMenuBody>, Body<typeof updateMenuBody>>;
  readonly fieldGroup: AttributesChecks<Body<typeof createFieldGroupBody>, Body<typeof updateFieldGroupBody>>;
} {
  const load = <State, Command, Event extends DomainEvent>(
    category: string,
    tenant: string,
    entityId: number,
    decider: Decider<State, Command, Event>,
  ) => deps.handler.load(streamName(category, tenant, entityId), decider);

  const categoryDecider = attributesDecider(CATEGORY);
  const fieldGroupDecider = attributesDecider(FIELD_GROUP);

  async function activeModule(tenant: string, moduleId: number, path: string) {
    const module = await load('module', tenant, moduleId, moduleDecider);
    if (module.state.status !== 'active')
      throw new PlatformError('validation_failed', `module ${moduleId} does not exist`, [
        { path, message: 'no such module' },
      ]);
    return module.state;
  }

  /** The parent must exist, and must not be the category itself or one of its descendants. */
  async function checkParent(
    tenant: string,
    parentId: number | null | undefined,
    self?: number,
  ): Promise<void> {
    let current = parentId ?? null;
    for (let depth = 0; current !== null; depth++) {
      if (current === self)
        throw new PlatformError('validation_failed', 'a category cannot be its own ancestor', [
          { path: 'parentId', message: 'would make a cycle' },
        ]);
      if (depth >= MAX_CATEGORY_DEPTH)
        throw new PlatformError('validation_failed', `categories nest at most ${MAX_CATEGORY_DEPTH} deep`);
      const parent = await load('category', tenant, current, categoryDecider);
      if (parent.state.status !== 'active')
        throw new PlatformError('validation_failed', `category ${current} does not exist`, [
          { path: 'parentId', message: 'no such category' },
        ]);
      current = (parent.state.attributes.parentId as number | null | undefined) ?? null;
    }
  }

  async function checkUsers(tenant: string, userIds: readonly number[] | undefined): Promise<void> {
    const missing: number[] = [];
    for (const userId of userIds ?? []) {
      const user = await load('user', tenant, userId, userDecider);
      if (user.state.status !== 'active') missing.push(userId);
    }
    if (missing.length > 0)
      throw new PlatformError('validation_failed', `no such users: ${missing.join(', ')}`, [
        { path: 'userIds', message: `no such users: ${missing.join(', ')}` },
      ]);
  }

  async function checkMenuItems(
    tenant: string,
    items: ReadonlyArray<{ moduleId?: number | undefined }> | undefined,
  ) {
    for (const [index, item] of (items ?? []).entries())
      if (item.moduleId !== undefined) await activeModule(tenant, item.moduleId, `items.${index}.moduleId`);
  }

  async function checkFields(tenant: string, moduleId: number, fieldIds: readonly number[] | undefined) {
    const module = await activeModule(tenant, moduleId, 'moduleId');
    const known = new Set(module.fields.map((field) => field.fieldId));
    const foreign = (fieldIds ?? []).filter((fieldId) => !known.has(fieldId));
    if (foreign.length > 0)
      throw new PlatformError(
        'validation_failed',
        `not fields of module ${moduleId}: ${foreign.join(', ')}`,
        [{ path: 'fieldIds', message: `not fields of module ${moduleId}: ${foreign.join(', ')}` }],
      );
  }

  return {
    category: {
      async checkCreate(body, tenant) {
        await checkParent(tenant, body.parentId);
        return { name: body.name, description: body.description ?? null, parentId: body.parentId ?? null };
      },
      async checkUpdate(body, tenant, categoryId) {
        await checkParent(tenant, body.parentId, categoryId);
        return body;
      },
    },
    team: {
      async checkCreate(body, tenant) {
        await checkUsers(tenant, body.userIds);
        return { name: body.name, description: body.description ?? null, userIds: body.userIds ?? [] };
      },
      async checkUpdate(body, tenant) {
        await checkUsers(tenant, body.userIds);
        return body;
      },
    },
    menu: {
      async checkCreate(body, tenant) {
        await checkMenuItems(tenant, body.items);
        return { name: body.name, position: body.position ?? 0, items: body.items ?? [] };
      },
      async checkUpdate(body, tenant) {
        await checkMenuItems(tenant, body.items);
        return body;
      },
    },
    fieldGroup: {
      async checkCreate(body, tenant) {
        await checkFields(tenant, body.moduleId, body.fieldIds);
        return {
          moduleId: body.moduleId,
          name: body.name,
          fieldIds: body.fieldIds ?? [],
          position: body.position ?? 0,
        };
      },
      async checkUpdate(body, tenant, fieldGroupId) {
        if (body.fieldIds !== undefined) {
          const group = await load('fieldGroup', tenant, fieldGroupId, fieldGroupDecider);
          // A missing group: the decider answers 404.
          if (group.state.status === 'active')
            await checkFields(tenant, group.state.attributes.moduleId as number, body.fieldIds);
        }
        return body;
      },
    },
  };
}
