/** The platform's own operations: health, readiness, metrics and the API usage of a system. */
import { z } from 'zod';
import { operation } from './operation';

export const usageQuery = z.object({
  from: z.iso.date().optional().meta({ description: 'First day (default: the first of this month).' }),
  to: z.iso.date().optional().meta({ description: 'Last day (default: today).' }),
});

export const getApiUsage = operation({
  operationId: 'getApiUsage',
  method: 'get',
  path: '/usage',
  tag: 'platform',
  summary: 'API calls of this system per day and credential (administrators)',
  query: usageQuery,
  responses: {
    200: {
      description: 'Calls counted between the two days, inclusive.',
      schema: z
        .object({
          from: z.string(),
          to: z.string(),
          total: z.number().int(),
          items: z.array(z.object({ day: z.string(), credential: z.string(), calls: z.number().int() })),
        })
        .meta({ id: 'ApiUsage' }),
    },
    429: { description: 'The system used up its API call quota for this minute.' },
  },
  security: 'token',
});

const readiness = z
  .object({ status: z.string(), checks: z.record(z.string(), z.unknown()) })
  .meta({ id: 'Readiness', description: 'Each projection: its position, whether it caught up, its error.' });

export const getHealth = operation({
  operationId: 'getHealth',
  method: 'get',
  path: '/healthz',
  tag: 'platform',
  summary: 'Liveness: the process answers',
  responses: { 200: { description: 'Alive.', schema: z.object({ status: z.literal('ok') }) } },
  security: 'none',
  root: true,
});

export const getReadiness = operation({
  operationId: 'getReadiness',
  method: 'get',
  path: '/readyz',
  tag: 'platform',
  summary: 'Readiness: every projection caught up and healthy',
  responses: {
    200: { description: 'Ready.', schema: readiness },
    503: {
      description: 'Not ready yet (a projection is catching up or failing): the checks say which.',
      schema: readiness,
    },
  },
  security: 'none',
  root: true,
});

export const getMetrics = operation({
  operationId: 'getMetrics',
  method: 'get',
  path: '/metrics',
  tag: 'platform',
  summary: 'Prometheus metrics',
  description:
    'With `METRICS_TOKEN` set, only `Authorization: Bearer <METRICS_TOKEN>`; without it, only clients on this host.',
  responses: {
    200: {
      description: 'The metrics in the Prometheus text format.',
      schema: z.string(),
      contentType: 'text/plain',
    },
  },
  security: 'none',
  root: true,
});

export const PLATFORM_OPERATIONS = [getApiUsage, getHealth, getReadiness, getMetrics];
