import type { z } from 'zod';
import type { provisionSystemBody } from '../../contracts/api/auth';
import { PlatformError } from '../../contracts/errors';
import { streamName } from '../../contracts/streams';
import type { CommandDeps } from '../deps';
import { ensureBootstrapAdmin } from '../identity/bootstrap';
import { userDecider } from '../identity/domain/user';
import type { Caller } from '../kit/caller';
import { withCommandId, type CommandResult } from '../kit/handler';
import { tenantDecider, type TenantState } from './domain/tenant';

/**
 * Sets up system `input.system` with its first admin, for the operator system: the set-up, then the admin's
 * account and API token (the token is returned this once). A system set up before is refused.
 */
export async function provisionSystem(
  deps: CommandDeps,
  caller: Caller,
  input: z.infer<typeof provisionSystemBody>,
): Promise<{ readonly result: CommandResult<TenantState>; readonly token: string }> {
  const firstUser = await deps.handler.load(streamName('user', input.system, 1), userDecider);
  const result = await deps.handler.handle(
    streamName('tenant', caller.principal.tenant, input.system),
    tenantDecider,
    {
      kind: 'ProvisionTenant',
      tenant: input.system,
      adminEmail: input.adminEmail,
      hasUsers: firstUser.state.status !== 'none',
    },
    withCommandId(caller.origin, deps.newCommandId()),
  );
  const { generatedToken } = await ensureBootstrapAdmin(deps.handler, deps.ids, {
    tenant: input.system,
    email: input.adminEmail,
    ...(input.adminPassword !== undefined && { password: input.adminPassword }),
  });
  // A set-up running at the same time got there first: it has the token.
  if (generatedToken === undefined)
    throw new PlatformError('conflict', `the system ${input.system} exists already`);
  return { result, token: generatedToken };
}
