/**
 * The integrator: webhooks (their settings, queue and logs), the scenarios they trigger and the runs of those
 * scenarios, and the receiver every hook's address leads to.
 */
import { z } from 'zod';
import { ERASED_VALUE } from '../personal-data';
import { dataStructureSchema, structureFieldsSchema } from '../../languages/data-structure';
import {
  HOOK_ACCEPTED,
  HOOK_MAX_BODY_BYTES,
  HOOK_QUEUE_FULL,
  HOOK_REQUESTS_PER_SECOND,
  HOOK_SCENARIO_FAILED,
  hookKeySchema,
  hookKindSchema,
  hookRequestSchema,
  hookResponseSchema,
  scenarioSettingsShape,
  webhookSettingsShape,
  webhookStatusSchema,
} from '../integrator';
import { operation } from './operation';
import {
  auditFields,
  canonicalUuid,
  entityId,
  erasureBody,
  entityOperations,
  etagHeader,
  listQuery,
  pageOf,
  pathIds,
  READ_ERRORS,
  WRITE_ERRORS,
} from './shared';
import { updateOf } from './catalogue';

// Webhooks

export const createHookBody = z
  .strictObject({
    name: webhookSettingsShape.name,
    kind: hookKindSchema.optional(),
    ...z.object(webhookSettingsShape).omit({ name: true }).partial().shape,
  })
  .meta({ id: 'WebhookCreate' });
export const updateHookBody = updateOf(webhookSettingsShape).meta({ id: 'WebhookUpdate' });

const webhookCore = {
  id: entityId,
  name: z.string(),
  kind: hookKindSchema,
  url: z.string().meta({
    description:
      "The hook's address: a URL whose last part is the 32-character hook id, or for a mailhook `mailto:` and its address.",
  }),
  address: z
    .string()
    .nullable()
    .meta({ description: "A mailhook's email address (`<hook id>@<mail domain>`); null for a web hook." }),
  key: z.string().meta({ description: 'The 32-character hook id.' }),
  udid: z.string().meta({ description: 'Unique webhook identifier.' }),
  status: webhookStatusSchema,
  scenarioId: entityId.nullable().meta({ description: 'The scenario it triggers (null: none).' }),
  unboundSince: z
    .string()
    .nullable()
    .meta({ description: 'Without a scenario since then; deactivated after 120 hours.' }),
  ipRestrictions: z.string(),
  dataStructure: dataStructureSchema.nullable(),
  dataStructureId: entityId
    .nullable()
    .meta({ description: 'The reusable data structure it validates by (null: none).' }),
  determinedStructure: dataStructureSchema
    .nullable()
    .meta({ description: 'The shape of a sample request, for mapping only (no validation).' }),
  redetermining: z.boolean().meta({ description: "The next request's shape will be stored." }),
  getRequestHeaders: z.boolean(),
  getRequestMethod: z.boolean(),
  jsonPassThrough: z.boolean(),
  maxResults: z.number().int(),
  queueCapacity: z.number().int(),
};
export const webhookWritten = z.object(webhookCore).meta({ id: 'WebhookWritten' });
const webhookRead = z.object({ ...webhookCore, ...auditFields }).meta({ id: 'Webhook' });

export const HOOK_OPERATIONS = entityOperations({
  noun: 'webhook',
  name: 'Webhook',
  plural: 'Webhooks',
  tag: 'webhooks',
  idName: 'webhookId',
  createBody: createHookBody,
  updateBody: updateHookBody,
  written: webhookWritten,
  read: webhookRead,
  examples: { create: { name: 'Orders from the shop', ipRestrictions: '203.0.113.0/24' } },
});

const hookPath = pathIds({ webhookId: 'The webhook.' });

function hookAction(operationId: string, action: string, summary: string, description: string) {
  return operation({
    operationId,
    method: 'post',
    path: `/webhook/{webhookId}/${action}`,
    tag: 'webhooks',
    summary,
    description,
    params: hookPath,
    responses: {
      200: { description: 'The webhook after the change.', schema: webhookWritten, headers: etagHeader },
      ...WRITE_ERRORS,
    },
    security: 'token',
  });
}

export const enableHook = hookAction(
  'enableWebhook',
  'enable',
  'Enable a webhook',
  'A disabled or deactivated hook takes requests again (a hook without a scenario gets another 120 hours).',
);
export const disableHook = hookAction(
  'disableWebhook',
  'disable',
  'Disable a webhook',
  'Requests to a disabled hook are refused with 403 until it is enabled.',
);
export const redetermineHookStructure = hookAction(
  'redetermineWebhookStructure',
  'redetermine',
  'Re-determine the data structure',
  'The shape of the next request is stored with the hook for mapping. It is not reusable and does not validate.',
);

const requestIdParam = canonicalUuid('a request id').meta({ description: 'The request.' });

const queueItem = z
  .object({
    requestId: z.string(),
    receivedAt: z.string(),
    method: z.string(),
    bytes: z.number().int(),
    failedRuns: z
      .number()
      .int()
      .meta({ description: 'Scheduled runs of this item that failed (it stays queued).' }),
    lastError: z.string().nullable().meta({ description: 'Why the last of them failed.' }),
  })
  .meta({ id: 'WebhookQueueItem' });
export const hookQueuePage = z
  .object({
    items: z.array(queueItem),
    meta: z.object({ total: z.number().int(), offset: z.number().int(), limit: z.number().int() }),
    capacity: z.number().int().meta({ description: 'How many requests the queue holds.' }),
  })
  .meta({ id: 'WebhookQueuePage', description: 'Queued requests in arrival order.' });
export const hookQueueRemoved = z
  .object({ webhookId: entityId, removed: z.number().int() })
  .meta({ id: 'WebhookQueueRemoved' });

export const listHookQueue = operation({
  operationId: 'listWebhookQueue',
  method: 'get',
  path: '/webhook/{webhookId}/queue',
  tag: 'webhooks',
  summary: "List a webhook's queue",
  description: 'Requests waiting for a scheduled run, oldest first; `meta.total` is the count.',
  params: hookPath,
  query: listQuery.pick({ offset: true, limit: true }),
  responses: { 200: { description: 'A page of the queue.', schema: hookQueuePage }, ...READ_ERRORS },
  security: 'token',
});
export const clearHookQueue = operation({
  operationId: 'clearWebhookQueue',
  method: 'delete',
  path: '/webhook/{webhookId}/queue',
  tag: 'webhooks',
  summary: "Clear a webhook's queue",
  params: hookPath,
  responses: {
    200: { description: 'How many requests were removed.', schema: hookQueueRemoved },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const deleteHookQueueItem = operation({
  operationId: 'deleteWebhookQueueItem',
  method: 'delete',
  path: '/webhook/{webhookId}/queue/{requestId}',
  tag: 'webhooks',
  summary: 'Delete one queued request',
  params: hookPath.extend({ requestId: requestIdParam }),
  responses: { 200: { description: 'The request was removed.', schema: hookQueueRemoved }, ...WRITE_ERRORS },
  security: 'token',
});

/** What a request's data reads as once a record made from it was erased. */
const erasedPlaceholder = z.literal(ERASED_VALUE).meta({
  description: "The request's data was erased (on its own, or with a record made from it).",
});

export const hookLogStatusSchema = z.enum(['success', 'warning', 'error']);
const hookLogCore = {
  id: z.string().meta({ description: 'The request id.' }),
  webhookId: entityId,
  status: hookLogStatusSchema.meta({
    description: 'success: accepted and run (or queued); warning: refused (4xx); error: failed.',
  }),
  loggedAt: z.string(),
  size: z.number().int().meta({ description: 'Bytes of the request body.' }),
  method: z.string(),
  responseStatus: z.number().int(),
  runId: z.string().nullable(),
};
const hookLogEntry = z.object(hookLogCore).meta({ id: 'WebhookLogEntry' });
export const hookLogDetail = z
  .object({
    ...hookLogCore,
    request: z.union([hookRequestSchema, erasedPlaceholder]),
    response: hookResponseSchema,
    bundle: z.unknown().meta({
      description: `The parsed items: query and body in one bundle (\`${ERASED_VALUE}\` once erased).`,
    }),
  })
  .meta({ id: 'WebhookLogDetail' });
export const listHookLogs = operation({
  operationId: 'listWebhookLogs',
  method: 'get',
  path: '/webhook/{webhookId}/log',
  tag: 'webhooks',
  summary: "List a webhook's logs",
  description: 'Newest first by default. Filterable by status, loggedAt, size, method, responseStatus.',
  params: hookPath,
  query: listQuery,
  responses: {
    200: { description: 'A page of log entries.', schema: pageOf(hookLogEntry, 'WebhookLogPage') },
    ...READ_ERRORS,
  },
  security: 'token',
});
export const getHookLog = operation({
  operationId: 'getWebhookLog',
  method: 'get',
  path: '/webhook/{webhookId}/log/{requestId}',
  tag: 'webhooks',
  summary: 'Read one log entry',
  params: hookPath.extend({ requestId: requestIdParam }),
  responses: {
    200: { description: 'The request, the response and the bundle.', schema: hookLogDetail },
    ...READ_ERRORS,
  },
  security: 'token',
});

export const eraseHookRequestBody = erasureBody('request', 'WebhookRequestErase');
export const hookRequestErasure = z
  .object({
    webhookId: entityId,
    requestId: z.string(),
    erased: z.literal(true),
    runs: z
      .array(z.string())
      .meta({ description: "The ids of the request's runs, whose outputs were erased." }),
  })
  .meta({ id: 'WebhookRequestErasure' });
export const eraseHookRequest = operation({
  operationId: 'eraseWebhookRequest',
  method: 'post',
  path: '/webhook/{webhookId}/log/{requestId}/erase',
  tag: 'webhooks',
  summary: "Erase what a hook request's sender sent, for good",
  description:
    "Administrators only. Whatever became of the request (run, queued, refused), destroys its data key, so its request, bundle, the refusal's text, and its runs' step outputs, responses and errors read as `[erased]` in its log, its runs, the queue, replays and the stream's consumers; its payload and files are deleted, and a request still queued leaves the queue. The log entry stays (time, size, status). Erasing a record made from a request erases the request too. Erasing again answers the same.",
  params: hookPath.extend({ requestId: requestIdParam }),
  body: { schema: eraseHookRequestBody },
  responses: {
    200: { description: 'The request is erased.', schema: hookRequestErasure },
    ...WRITE_ERRORS,
  },
  security: 'token',
});

// Reusable data structures

const structureName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters');
const structureFields = structureFieldsSchema.meta({
  description:
    'Fields with a type (text, number, boolean, date, buffer, collection with fields, array with items, any) and a required flag; nested at most 8 deep, 500 fields in all.',
});
export const createStructureBody = z
  .strictObject({ name: structureName, fields: structureFields })
  .meta({ id: 'StructureCreate' });
export const updateStructureBody = updateOf({ name: structureName, fields: structureFields }).meta({
  id: 'StructureUpdate',
});
const structureCore = { id: entityId, name: z.string() };
export const STRUCTURE_OPERATIONS = entityOperations({
  noun: 'data-structure',
  name: 'Structure',
  plural: 'Structures',
  tag: 'data structures',
  idName: 'dataStructureId',
  createBody: createStructureBody,
  updateBody: updateStructureBody,
  written: z.object({ ...structureCore, fields: structureFieldsSchema }).meta({ id: 'StructureWritten' }),
  read: z
    .object({ ...structureCore, fields: structureFieldsSchema, ...auditFields })
    .meta({ id: 'Structure' }),
  examples: {
    create: {
      name: 'Order',
      fields: [
        { name: 'number', type: 'text', required: true },
        {
          name: 'lines',
          type: 'array',
          items: { type: 'collection', fields: [{ name: 'qty', type: 'number' }] },
        },
      ],
    },
  },
});

// Scenarios

export const createScenarioBody = z
  .strictObject({
    name: scenarioSettingsShape.name,
    active: z.boolean().optional().meta({ description: 'Default true.' }),
    ...z.object(scenarioSettingsShape).omit({ name: true }).partial().shape,
  })
  .meta({ id: 'ScenarioCreate' });
export const updateScenarioBody = updateOf(scenarioSettingsShape).meta({ id: 'ScenarioUpdate' });

const scenarioCore = {
  id: entityId,
  ownerId: z
    .number()
    .int()
    .nullable()
    .meta({ description: "The user who made it: its record steps act with this user's rights." }),
  status: z.enum(['active', 'inactive']),
  deactivatedBecause: z.string().nullable().meta({ description: 'Why the platform stopped it (3 errors…).' }),
  ...scenarioSettingsShape,
};
export const scenarioWritten = z.object(scenarioCore).meta({ id: 'ScenarioWritten' });
const scenarioRead = z
  .object({
    ...scenarioCore,
    lastScheduledRunAt: z
      .string()
      .nullable()
      .meta({ description: 'When its last scheduled run started (interval schedules; null: none yet).' }),
    consecutiveErrors: z.number().int().meta({
      description: 'Scheduled runs that failed in a row; the third deactivates the scenario.',
    }),
    ...auditFields,
  })
  .meta({ id: 'Scenario' });

export const SCENARIO_OPERATIONS = entityOperations({
  noun: 'scenario',
  name: 'Scenario',
  plural: 'Scenarios',
  tag: 'scenarios',
  idName: 'scenarioId',
  createBody: createScenarioBody,
  updateBody: updateScenarioBody,
  written: scenarioWritten,
  read: scenarioRead,
  examples: {
    create: {
      name: 'Order to record',
      webhookId: 1,
      steps: [
        { kind: 'createRecord', moduleId: 2, name: { expr: 'order.number' } },
        { kind: 'webhookResponse', status: 200, body: { expr: '{"ok": true}' } },
      ],
    },
  },
});

const scenarioPath = pathIds({ scenarioId: 'The scenario.' });
function scenarioAction(operationId: string, action: string, summary: string) {
  return operation({
    operationId,
    method: 'post',
    path: `/scenario/{scenarioId}/${action}`,
    tag: 'scenarios',
    summary,
    params: scenarioPath,
    responses: {
      200: { description: 'The scenario after the change.', schema: scenarioWritten, headers: etagHeader },
      ...WRITE_ERRORS,
    },
    security: 'token',
  });
}
export const activateScenario = scenarioAction('activateScenario', 'activate', 'Activate a scenario');

// Moving scenarios between systems

export const SCENARIO_EXPORT_FORMAT = 'records-platform/scenario';
export const scenarioExport = z
  .object({
    format: z.literal(SCENARIO_EXPORT_FORMAT),
    version: z.literal(1),
    exportedAt: z.string(),
    scenario: z.object({
      id: entityId.meta({ description: 'Its id where it was exported (for reference).' }),
      ...z.object(scenarioSettingsShape).omit({ webhookId: true }).shape,
    }),
    webhook: z
      .object({ id: entityId, kind: hookKindSchema.default('web'), ...webhookSettingsShape })
      .nullable()
      .meta({ description: 'The hook that triggers it, with its settings and data structure (null: none).' }),
    dataStructures: z
      .array(z.object({ id: entityId, name: structureName, fields: structureFieldsSchema }))
      .max(10)
      .default([])
      .meta({ description: 'The reusable data structures the hook validates by, made anew by an import.' }),
    references: z.object({ moduleIds: z.array(entityId), labelIds: z.array(entityId) }).meta({
      description: 'The modules and labels its steps name, which an import into another system remaps.',
    }),
  })
  .meta({ id: 'ScenarioExport' });
export const exportScenario = operation({
  operationId: 'exportScenario',
  method: 'get',
  path: '/scenario/{scenarioId}/export',
  tag: 'scenarios',
  summary: 'Export a scenario as one JSON document',
  description:
    'The scenario with its steps and its hook (settings and data structure), to version it or import it elsewhere.',
  params: scenarioPath,
  responses: { 200: { description: 'The document.', schema: scenarioExport }, ...READ_ERRORS },
  security: 'token',
});
const idMap = z.record(z.string().regex(/^[1-9][0-9]{0,9}$/, 'keys are ids'), entityId).optional();
export const importScenarioBody = z
  .strictObject({
    document: scenarioExport,
    moduleIds: idMap.meta({
      description: 'Module ids of the document → module ids here (others kept as they are).',
    }),
    labelIds: idMap.meta({
      description: 'Label ids of the document → label ids here (others kept as they are).',
    }),
    active: z.boolean().optional().meta({ description: 'Default false: switch it on once checked.' }),
  })
  .meta({ id: 'ScenarioImport' });
export const importScenario = operation({
  operationId: 'importScenario',
  method: 'post',
  path: '/scenario/import',
  tag: 'scenarios',
  summary: 'Import a scenario exported here or elsewhere',
  description:
    "Creates the document's hook (with a new address) and the scenario bound to it, with new ids; the module and label ids its steps name are remapped as given and must exist here. Validated like a scenario created by hand.",
  body: { schema: importScenarioBody },
  responses: {
    201: {
      description: 'What was created.',
      schema: z
        .object({ scenario: scenarioWritten, webhook: webhookWritten.nullable() })
        .meta({ id: 'ScenarioImported' }),
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const deactivateScenario = scenarioAction('deactivateScenario', 'deactivate', 'Deactivate a scenario');

const runCore = {
  id: z.string().meta({
    description: "The run: the request event's id, or `<id>~<attempt>` for a queued request run again.",
  }),
  scenarioId: entityId,
  webhookId: entityId,
  requestId: z.string(),
  trigger: z.enum(['instant', 'scheduled']),
  attempt: z
    .number()
    .int()
    .meta({ description: 'The how-manieth run of this request (1 unless a run failed).' }),
  status: z.enum(['running', 'succeeded', 'failed']),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  operations: z.number().int().meta({ description: 'Steps completed.' }),
  error: z.string().nullable(),
  failedStep: z.number().int().nullable(),
  responseStatus: z.number().int().nullable(),
};
const scenarioRun = z.object(runCore).meta({ id: 'ScenarioRun' });
export const scenarioRunDetail = z
  .object({
    ...runCore,
    steps: z.array(
      z.object({
        index: z.number().int(),
        kind: z.string(),
        output: z.unknown(),
        path: z.string().meta({
          description:
            "Where the step is in the scenario: its index in its list, a route's steps after their router's (`4.1.0`: router 4, route 1, step 0), an iteration's item after the step (`5[3]`: step 5 for item 3).",
        }),
        durationMs: z
          .number()
          .nullable()
          .meta({ description: 'How long the step took (null in runs recorded before it was kept).' }),
      }),
    ),
  })
  .meta({ id: 'ScenarioRunDetail' });
export const listScenarioRuns = operation({
  operationId: 'listScenarioRuns',
  method: 'get',
  path: '/scenario/{scenarioId}/run',
  tag: 'scenarios',
  summary: "List a scenario's runs",
  description: 'Newest first by default; filterable by status, trigger, startedAt.',
  params: scenarioPath,
  query: listQuery,
  responses: {
    200: { description: 'A page of runs.', schema: pageOf(scenarioRun, 'ScenarioRunPage') },
    ...READ_ERRORS,
  },
  security: 'token',
});
export const getScenarioRun = operation({
  operationId: 'getScenarioRun',
  method: 'get',
  path: '/scenario/{scenarioId}/run/{runId}',
  tag: 'scenarios',
  summary: 'Read one run with its steps',
  params: scenarioPath.extend({
    runId: z
      .string()
      .regex(
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(~[1-9][0-9]{0,5})?$/,
        'must be a run id (a request id, then ~<attempt> for a run again)',
      )
      .meta({ description: 'The run: a request id, or `<request id>~<attempt>`.' }),
  }),
  responses: { 200: { description: 'The run.', schema: scenarioRunDetail }, ...READ_ERRORS },
  security: 'token',
});

// The receiver

const hookKeyPath = z.object({
  hookKey: hookKeySchema.meta({ description: "The hook id from the hook's URL." }),
});
const text = (description: string) => ({ description, schema: z.string(), contentType: 'text/plain' });
const receiverResponses = {
  200: text(`\`${HOOK_ACCEPTED}\`, or the scenario's Webhook response (2xx, 3xx or 4xx, any body).`),
  400: text(
    `\`${HOOK_QUEUE_FULL}\` when the queue is at capacity; otherwise the data failed the hook's data structure or the body is malformed.`,
  ),
  403: text('The caller is not in the IP restrictions, or the hook is disabled.'),
  404: text("No hook has this id (on a host other than the hook host: the platform's JSON error)."),
  410: text('The hook was deactivated (no scenario for more than 120 hours).'),
  413: text(`The body is over ${HOOK_MAX_BODY_BYTES} bytes (declared, or while streaming).`),
  415: text('The content type is not one the receiver reads.'),
  429: text(`More than ${HOOK_REQUESTS_PER_SECOND} requests per second to this hook (\`Retry-After\`).`),
  500: text(`\`${HOOK_SCENARIO_FAILED}\` when a scenario with a Webhook response step fails.`),
};
const receiverDescription =
  'No credentials: the hook id names the hook (and its system). The query string and the body (JSON, form or ' +
  'multipart) become one bundle, the query string winning on duplicate keys. The request is stored before the ' +
  'answer; the answer waits up to 40 s for a Webhook response step. Served only on the hook host (that of ' +
  "HOOK_BASE_URL; by default the base host, never a system's host). Every answer carries " +
  '`Content-Security-Policy: sandbox` and `X-Content-Type-Options: nosniff`.';
export const receiveWebhookGet = operation({
  operationId: 'receiveWebhookGet',
  method: 'get',
  path: '/hook/{hookKey}',
  tag: 'webhook receiver',
  summary: 'Send data to a webhook (query string)',
  description: receiverDescription,
  params: hookKeyPath,
  responses: receiverResponses,
  security: 'none',
  root: true,
});
export const receiveWebhook = operation({
  operationId: 'receiveWebhook',
  method: 'post',
  path: '/hook/{hookKey}',
  tag: 'webhook receiver',
  summary: 'Send data to a webhook',
  description: receiverDescription,
  params: hookKeyPath,
  body: {
    schema: z.record(z.string(), z.unknown()),
    contentTypes: [
      'application/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'text/plain',
    ],
    required: false,
  },
  responses: receiverResponses,
  security: 'none',
  root: true,
});

export const INTEGRATOR_OPERATIONS = [
  ...Object.values(STRUCTURE_OPERATIONS),
  ...Object.values(HOOK_OPERATIONS),
  enableHook,
  disableHook,
  redetermineHookStructure,
  listHookQueue,
  clearHookQueue,
  deleteHookQueueItem,
  listHookLogs,
  getHookLog,
  eraseHookRequest,
  ...Object.values(SCENARIO_OPERATIONS),
  activateScenario,
  deactivateScenario,
  exportScenario,
  importScenario,
  listScenarioRuns,
  getScenarioRun,
  receiveWebhookGet,
  receiveWebhook,
];
