import type { ServiceSelection } from './wiring';

/** The services `bin/service.ts` starts alone (what each container of the compose stack runs). */
export const SERVICES: Readonly<Record<string, ServiceSelection>> = {
  'command-api': { command: true, query: false, projections: false, relay: false, integrator: false },
  'query-api': { command: false, query: true, projections: false, relay: false, integrator: false },
  projections: { command: false, query: false, projections: true, relay: true, integrator: false },
  integrator: { command: false, query: false, projections: false, relay: false, integrator: true },
};
