import type { Request, Router } from 'express';
import {
  getToken,
  getTwoFactor,
  getUser,
  listTokens,
  listUsers,
  tokenParams,
} from '../../contracts/api/users';
import { mount } from '../../infra/http/operations';
import { getTokenPriority } from '../../contracts/api/auth';
import { DEFAULT_CREDENTIAL_ORDER, isAdmin, mayActOnAccount } from '../../contracts/auth';
import { PlatformError } from '../../contracts/errors';
import { AUDIT_COLUMNS } from '../../languages/filter/record-fields';
import { catalogue } from '../../languages/filter/resolve';
import { equals } from '../../languages/filter/store-query';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import { validate } from '../../contracts/validation';
import { contextOf, principalOf } from '../../infra/http/context';
import type { CredentialActivity } from '../../infra/http/metering';
import { idParam } from '../../infra/http/params';
import { sendJson } from '../../infra/http/respond';
import type { Document } from '../../contracts/read-model-changes';
import { USER_FIELDS } from './catalogues';
import { readOne, readPage, type EntityDescription, type EntityReadDeps } from './entities';

export interface UserReadDeps extends EntityReadDeps {
  /** Calls and last use per credential id (`token:<id>`), from the API meter. */
  readonly credentialActivity: (
    tenant: string,
    credentials: readonly string[],
  ) => Promise<Map<string, CredentialActivity>>;
}

const USERS: EntityDescription = {
  module: 'user',
  collection: READ_MODELS.users,
  projection: 'identity',
  fields: USER_FIELDS,
  view: (doc: Document) => ({
    id: doc.userId,
    email: doc.email,
    name: doc.name,
    role: doc.role,
    active: doc.active !== false,
    permissions: doc.permissions ?? null,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  }),
  noun: 'user',
};

/** A token as listed: never its hash (the store's document id), only the prefix and last four characters. */
const TOKENS: EntityDescription = {
  module: 'token',
  collection: READ_MODELS.credentials,
  projection: 'identity',
  fields: catalogue({
    id: { path: 'tokenId', type: 'string' },
    name: { path: 'name', type: 'string' },
    expiresAt: { path: 'expiresAt', type: 'datetime' },
    ...AUDIT_COLUMNS,
  }),
  view: (doc: Document) => ({
    id: doc.tokenId,
    userId: doc.userId,
    name: doc.name,
    prefix: doc.prefix,
    last4: doc.last4,
    permissions: doc.permissions ?? null,
    expiresAt: doc.expiresAt ?? null,
    bootstrap: doc.bootstrap === true,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  }),
  noun: 'token',
  defaultOrder: [{ path: 'createdAt', direction: 'desc' }],
};

/**
 * Only the user themselves and administrators see a user's details and tokens. Users reading their own
 * account need only a credential that allows it; administrators need the family's read right.
 */
function account(req: Request, userId: number, entity: EntityDescription): EntityDescription {
  const principal = principalOf(req);
  if (!mayActOnAccount(principal, userId, entity.module, 'read'))
    throw new PlatformError('forbidden', "only the user and administrators see a user's details and tokens");
  return { ...entity, authorizeRead: () => principal.tenant };
}

/** Users (`/user`) and their private API tokens (`/auth/{userId}/token`). */
export function addUserReadRoutes(router: Router, deps: UserReadDeps): void {
  const withActivity = async (req: Request, tokens: Record<string, unknown>[]) => {
    const activity = await deps.credentialActivity(
      principalOf(req).tenant,
      tokens.map((token) => `token:${String(token.id)}`),
    );
    return tokens.map((token) => {
      const used = activity.get(`token:${String(token.id)}`);
      return { ...token, lastUsedAt: used?.lastUsedAt ?? null, calls: used?.calls ?? 0 };
    });
  };

  /** The calling user's credential order, and which credential made this very request. */
  mount(router, getTokenPriority, (req, res) => {
    const principal = principalOf(req);
    sendJson(res, 200, {
      order: principal.credentialOrder ?? DEFAULT_CREDENTIAL_ORDER,
      default: principal.credentialOrder === undefined,
      credential: {
        source: contextOf(req).credentialSource,
        kind: principal.credential.kind,
        id: principal.credential.id,
      },
    });
  });

  mount(router, listUsers, async (req, res) => {
    if (!isAdmin(principalOf(req))) throw new PlatformError('forbidden', 'only administrators list users');
    sendJson(res, 200, await readPage(req, deps, USERS));
  });

  mount(router, getUser, async (req, res) => {
    const userId = idParam(req, 'userId');
    const { body, etag } = await readOne(req, deps, account(req, userId, USERS), userId);
    sendJson(res, 200, body, { ETag: etag });
  });

  /** Two-factor state: the devices (names, confirmed, last use) and how many recovery codes are left. */
  mount(router, getTwoFactor, async (req, res) => {
    const userId = idParam(req, 'userId');
    await readOne(req, deps, account(req, userId, USERS), userId);
    const tenant = principalOf(req).tenant;
    const user = await deps.readModels.get(tenant, READ_MODELS.users, documentId(tenant, userId));
    const devices = Object.entries((user?.twoFactorDevices ?? {}) as Record<string, Record<string, unknown>>)
      .map(([id, device]) => ({
        id,
        name: device.name,
        confirmed: device.confirmed === true,
        addedAt: device.addedAt,
        lastUsedAt: device.lastUsedAt ?? null,
      }))
      .sort((a, b) => String(a.addedAt).localeCompare(String(b.addedAt)));
    sendJson(res, 200, {
      enabled: devices.some((device) => device.confirmed),
      devices,
      recoveryCodesLeft: Number(user?.recoveryCodesLeft ?? 0),
    });
  });

  /** A user's tokens; an unknown user is a 404 like every other unknown id, not an empty list. */
  mount(router, listTokens, async (req, res) => {
    const userId = idParam(req, 'userId');
    const tokens = account(req, userId, TOKENS);
    const page = await readPage(req, deps, tokens, equals('userId', userId));
    const tenant = principalOf(req).tenant;
    if (!(await deps.readModels.get(tenant, READ_MODELS.users, documentId(tenant, userId))))
      throw new PlatformError('not_found', `user ${userId} not found`);
    sendJson(res, 200, { ...page, items: await withActivity(req, page.items as Record<string, unknown>[]) });
  });

  mount(router, getToken, async (req, res) => {
    const userId = idParam(req, 'userId');
    const { tokenId } = validate(tokenParams, req.params, 'path');
    const page = await readPage(req, deps, account(req, userId, TOKENS), {
      kind: 'and',
      children: [equals('userId', userId), equals('tokenId', tokenId)],
    });
    const [token] = page.items as Record<string, unknown>[];
    if (!token) throw new PlatformError('not_found', `user ${userId} has no token ${tokenId}`);
    const [shown] = await withActivity(req, [token]);
    sendJson(res, 200, shown);
  });
}
