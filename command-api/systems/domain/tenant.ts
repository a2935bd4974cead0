import { PlatformError } from '../../../contracts/errors';
import type { TenantEvent } from '../../../contracts/events/tenants';
import { withPersonalValues, type Decider } from '../../kit/decider';
import { ADMIN_USER_ID } from '../../identity/bootstrap';

export interface TenantState {
  readonly provisioned: boolean;
}

export interface ProvisionTenant {
  readonly kind: 'ProvisionTenant';
  readonly tenant: string;
  readonly adminEmail: string;
  /** Whether the system already has users (the route reads it): then it was not ours to set up. */
  readonly hasUsers: boolean;
}

/**
 * A system is set up once; one that already has users (the operator's own) is not set up again. A set-up that
 * stopped before its first admin existed may be finished by asking again.
 */
export const tenantDecider: Decider<TenantState, ProvisionTenant, TenantEvent> = {
  initialState: { provisioned: false },

  decide(command, state) {
    if (command.hasUsers) throw new PlatformError('conflict', `the system ${command.tenant} exists already`);
    if (state.provisioned) return [];
    // The address is the first admin's, personal data of theirs: sealed under their key, in their system.
    return [
      withPersonalValues<TenantEvent>(
        { type: 'TenantProvisioned', data: { tenant: command.tenant, adminEmail: command.adminEmail } },
        { kind: 'user', id: ADMIN_USER_ID, tenant: command.tenant, paths: [['adminEmail']] },
      ),
    ];
  },

  evolve() {
    return { provisioned: true };
  },
};
