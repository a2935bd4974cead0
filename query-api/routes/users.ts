import type { Request, Router } from 'express';
import { z } from 'zod';
import { isAdmin } from '../../contracts/auth';
import { PlatformError } from '../../contracts/errors';
import { AUDIT_COLUMNS } from '../../contracts/query/record-fields';
import { catalogue } from '../../contracts/query/resolve';
import { equals } from '../../contracts/query/store-query';
import { READ_MODELS } from '../../contracts/read-models';
import { validate } from '../../contracts/validation';
import { principalOf } from '../../infra/http/context';
import type { CredentialActivity } from '../../infra/http/metering';
import { idParam } from '../../infra/http/params';
import { sendJson } from '../../infra/http/respond';
import type { Document } from '../../infra/read-store/port';
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

const tokenIdParam = z.object({ userId: z.string(), tokenId: z.uuid('must be a token id') });

/** Only the user themselves and administrators see a user's details and tokens. */
function selfOrAdmin(req: Request, userId: number): void {
  const principal = principalOf(req);
  if (principal.userId !== String(userId) && !isAdmin(principal))
    throw new PlatformError('forbidden', "only the user and administrators see a user's details and tokens");
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

  router.get('/user', async (req, res) => {
    if (!isAdmin(principalOf(req))) throw new PlatformError('forbidden', 'only administrators list users');
    sendJson(res, 200, await readPage(req, deps, USERS));
  });

  router.get('/user/:userId', async (req, res) => {
    const userId = idParam(req, 'userId');
    selfOrAdmin(req, userId);
    const { body, etag } = await readOne(req, deps, USERS, userId);
    sendJson(res, 200, body, { ETag: etag });
  });

  router.get('/auth/:userId/token', async (req, res) => {
    const userId = idParam(req, 'userId');
    selfOrAdmin(req, userId);
    const page = await readPage(req, deps, TOKENS, equals('userId', userId));
    sendJson(res, 200, { ...page, items: await withActivity(req, page.items as Record<string, unknown>[]) });
  });

  router.get('/auth/:userId/token/:tokenId', async (req, res) => {
    const userId = idParam(req, 'userId');
    const { tokenId } = validate(tokenIdParam, req.params, 'path');
    selfOrAdmin(req, userId);
    const page = await readPage(req, deps, TOKENS, {
      kind: 'and',
      children: [equals('userId', userId), equals('tokenId', tokenId)],
    });
    const [token] = page.items as Record<string, unknown>[];
    if (!token) throw new PlatformError('not_found', `user ${userId} has no token ${tokenId}`);
    const [shown] = await withActivity(req, [token]);
    sendJson(res, 200, shown);
  });
}
