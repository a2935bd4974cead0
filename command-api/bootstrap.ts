import { scrypt, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { uuidV5 } from '../contracts/ids';
import { API_TOKEN_PREFIX, hashToken, newApiToken } from '../contracts/secrets';
import { streamName } from '../contracts/streams';
import { userDecider } from './domain/user';
import { bookkeepingContext, type CommandContext, type CommandHandler } from './kit/handler';
import type { IdAllocator } from './kit/id-allocator';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/** scrypt (memory-hard), encoded with its parameters so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const N = 2 ** 15;
  const key = await scryptAsync(password, salt, 32, { N, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${N}$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export interface BootstrapOptions {
  readonly tenant: string;
  readonly email: string;
  readonly password?: string;
  readonly token?: string;
}

/** The bootstrap admin is user 1 of the tenant. */
const ADMIN_USER_ID = 1;

/**
 * Creates the first admin of a tenant on first start, and its API token: `ADMIN_TOKEN` when set (a changed
 * value replaces the previous bootstrap token), otherwise a generated one, returned so it is printed once.
 * Every later start finds it all in place and appends nothing.
 */
export async function ensureBootstrapAdmin(
  handler: CommandHandler,
  ids: IdAllocator,
  options: BootstrapOptions,
): Promise<{ generatedToken?: string }> {
  const stream = streamName('user', options.tenant, ADMIN_USER_ID);
  const context = (purpose: string): CommandContext =>
    bookkeepingContext(options.tenant, uuidV5(`bootstrap:${options.tenant}:${purpose}`));
  let { state } = await handler.load(stream, userDecider);
  if (state.status === 'none') {
    const userId = await ids.next(options.tenant, 'user');
    if (userId !== ADMIN_USER_ID)
      throw new Error(`cannot bootstrap ${options.tenant}: users exist but user ${ADMIN_USER_ID} does not`);
    const passwordHash = options.password ? await hashPassword(options.password) : null;
    ({ state } = await handler.handle(
      stream,
      userDecider,
      {
        kind: 'RegisterUser',
        userId,
        email: options.email,
        name: 'Administrator',
        role: 'admin',
        passwordHash,
      },
      context('user'),
    ));
  }
  const bootstrapTokens = Object.entries(state.tokens).filter(([, token]) => token.bootstrap);
  const wantedHash = options.token ? hashToken(options.token) : undefined;
  if (
    wantedHash
      ? bootstrapTokens.some(([, token]) => token.tokenHash === wantedHash)
      : bootstrapTokens.length > 0
  )
    return {};

  const value = options.token ?? newApiToken();
  const tokenId = uuidV5(`bootstrap-token:${hashToken(value)}`);
  await handler.handle(
    stream,
    userDecider,
    {
      kind: 'IssueApiToken',
      token: {
        tokenId,
        name: 'bootstrap admin token',
        tokenHash: hashToken(value),
        prefix: value.startsWith(API_TOKEN_PREFIX) ? API_TOKEN_PREFIX : value.slice(0, 4),
        last4: value.slice(-4),
        permissions: null,
        expiresAt: null,
        bootstrap: true,
      },
    },
    context(`token:${tokenId}`),
  );
  for (const [previous] of bootstrapTokens) {
    await handler.handle(
      stream,
      userDecider,
      { kind: 'RevokeApiToken', tokenId: previous },
      context(`revoke:${previous}`),
    );
  }
  return options.token ? {} : { generatedToken: value };
}
