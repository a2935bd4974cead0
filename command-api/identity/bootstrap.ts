import { uuidV5 } from '../../contracts/ids';
import { hashToken, newApiToken, tokenDisplay } from '../../contracts/secrets';
import { streamName } from '../../contracts/streams';
import { userDecider } from './domain/user';
import { emailClaimDecider, emailClaimStream } from './domain/email-claim';
import { hashPassword } from './passwords';
import { bookkeepingContext, type CommandContext, type CommandHandler } from '../kit/handler';
import type { IdAllocator } from '../kit/id-allocator';

export interface BootstrapOptions {
  readonly tenant: string;
  readonly email: string;
  readonly password?: string;
  readonly token?: string;
}

/** The bootstrap admin is user 1 of the tenant. */
/** A system's first administrator. */
export const ADMIN_USER_ID = 1;

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
  // The admin's address is taken like any user's (earlier releases did not claim it; one another user took
  // meanwhile stays theirs).
  const claimStream = emailClaimStream(options.tenant, state.email);
  const claim = await handler.load(claimStream, emailClaimDecider);
  if (claim.state.userId === null)
    await handler.handle(
      claimStream,
      emailClaimDecider,
      { kind: 'ClaimEmail', email: state.email, userId: ADMIN_USER_ID, holderExists: false },
      context('email'),
    );
  // A deactivated admin gets no token (deactivation revoked theirs); reactivated, the next start issues it again.
  if (state.status !== 'active') return {};
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
        ...tokenDisplay(value),
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
