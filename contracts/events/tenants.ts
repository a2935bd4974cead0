import { z } from 'zod';
import type { EventDefinition } from './definition';

/** A system (tenant) set up by an operator: recorded in the operator's system, one stream per new system. */
export const tenantProvisioned = z.object({ tenant: z.string().min(1), adminEmail: z.email() });

export type TenantEvent = { type: 'TenantProvisioned'; data: z.infer<typeof tenantProvisioned> };

export const TENANT_EVENTS: readonly EventDefinition[] = [
  { type: 'TenantProvisioned', version: 1, schema: tenantProvisioned },
];
