/**
 * The integrator's shapes: a webhook's settings, a scenario's trigger, schedule and steps, and the values a
 * step maps from the incoming bundle. Used by the API contracts, the events and the scenario runner alike.
 */
import { z } from 'zod';
import { entityIdSchema } from './entity-id';
import { dataStructureSchema } from '../languages/data-structure';
import { ipAllowlistText } from './ip-allowlist';
import type { FieldDefinition } from './fields';

/** The last part of a hook's address: 32 characters of [A-Za-z0-9]. */
export const HOOK_KEY_LENGTH = 32;
export const hookKeySchema = z
  .string()
  .length(HOOK_KEY_LENGTH, `a hook id has ${HOOK_KEY_LENGTH} characters`)
  .regex(/^[A-Za-z0-9]+$/, 'a hook id is letters and digits');

/** What brings a hook its data: HTTP requests to its URL (`web`) or email to its address (`mail`). */
export const hookKindSchema = z.enum(['web', 'mail']).meta({
  description:
    'What the hook receives: HTTP requests to its URL (`web`, the default) or email to its address (`mail`, a mailhook).',
});
export type HookKind = z.infer<typeof hookKindSchema>;

/** Where hooks are published: web hooks under a base URL, mailhooks at a mail domain. */
export interface HookPublication {
  readonly baseUrl: string;
  readonly mailDomain: string;
}

/** A hook's URL, and a mailhook's email address (`<hook id>@<mail domain>`; null for a web hook). */
export function hookAddressOf(
  kind: HookKind,
  key: string,
  at: HookPublication,
): { url: string; address: string | null } {
  if (kind === 'web') return { url: `${at.baseUrl}/${key}`, address: null };
  const address = `${key}@${at.mailDomain}`;
  return { url: `mailto:${address}`, address };
}

/** The largest email a mailhook takes, attachments included: 25 MB (the spec's limit). */
export const MAIL_MAX_BYTES = 26_214_400;

/** Requests a hook takes per second before it answers 429 (the spec's limit). */
export const HOOK_REQUESTS_PER_SECOND = 30;
/** The largest request body a hook reads (Content-Length or streamed): 5 MB. */
export const HOOK_MAX_BODY_BYTES = 5_242_880;
/** How long a hook may stay without a scenario before it is deactivated: 120 hours. */
export const HOOK_UNBOUND_LIFETIME_MS = 120 * 3_600_000;
/** How long the receiver waits for a Webhook response step before it answers `Accepted`. */
export const HOOK_RESPONSE_TIMEOUT_MS = 40_000;
export const DEFAULT_MAX_RESULTS = 2;
export const DEFAULT_QUEUE_CAPACITY = 10_000;
export const MAX_QUEUE_CAPACITY = 50_000;
/** Errors in a row that deactivate a scheduled scenario. */
export const SCHEDULED_ATTEMPTS = 3;

/** Operations one run may do (each step once per item and route it runs for). */
export const MAX_RUN_OPERATIONS = 10_000;
/** Runs one request may have: its first, then one per failed scheduled run (`<id>~2`…). */
export const MAX_RUNS_PER_REQUEST = 100;

export const HOOK_ACCEPTED = 'Accepted';
export const HOOK_QUEUE_FULL = 'Queue is full.';
export const HOOK_SCENARIO_FAILED = 'Scenario failed to complete.';

export const webhookStatusSchema = z.enum(['enabled', 'disabled', 'deactivated']);
export type WebhookStatus = z.infer<typeof webhookStatusSchema>;

/** What a webhook's owner sets; every key has a default. */
export const webhookSettingsShape = {
  name: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  ipRestrictions: ipAllowlistText.meta({
    description: 'Comma-separated IPv4/IPv6 addresses and CIDR ranges allowed to call; empty: everyone.',
    example: '203.0.113.0/24, 2001:db8::/32',
  }),
  dataStructure: dataStructureSchema.nullable().meta({
    description: 'Incoming data is validated against it (400 with the reasons); null: no validation.',
  }),
  dataStructureId: entityIdSchema.nullable().meta({
    description:
      'A reusable data structure (`/data-structure`) incoming data is validated against too, as it is when the request comes; null: none.',
  }),
  getRequestHeaders: z.boolean().meta({ description: 'Put the request headers in the bundle as `Headers`.' }),
  getRequestMethod: z.boolean().meta({ description: 'Put the HTTP method in the bundle as `Method`.' }),
  jsonPassThrough: z
    .boolean()
    .meta({ description: 'Pass a JSON body on as one text string (`value`) instead of fields.' }),
  maxResults: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .meta({ description: `Queued requests one scheduled run processes; default ${DEFAULT_MAX_RESULTS}.` }),
  queueCapacity: z
    .number()
    .int()
    .min(1)
    .max(MAX_QUEUE_CAPACITY)
    .meta({
      description: `Requests the queue holds before it answers 400 \`${HOOK_QUEUE_FULL}\`; default ${DEFAULT_QUEUE_CAPACITY}, at most ${MAX_QUEUE_CAPACITY}.`,
    }),
};
export const webhookSettingsSchema = z.object(webhookSettingsShape);
export type WebhookSettings = z.infer<typeof webhookSettingsSchema>;

/** `defaults` with every key `given` sets (keys given as undefined keep their default). */
export function withDefaults<Full extends object>(
  defaults: Full,
  given: { [Key in keyof Full]?: Full[Key] | undefined },
): Full {
  const set = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  return { ...defaults, ...set };
}

export const DEFAULT_WEBHOOK_SETTINGS: Omit<WebhookSettings, 'name'> = {
  ipRestrictions: '',
  dataStructure: null,
  dataStructureId: null,
  getRequestHeaders: false,
  getRequestMethod: false,
  jsonPassThrough: false,
  maxResults: DEFAULT_MAX_RESULTS,
  queueCapacity: DEFAULT_QUEUE_CAPACITY,
};

/**
 * A value a step maps: a literal JSON value, or `{ "expr": "<JSONata>" }` evaluated against the bundle
 * (variables set by earlier steps are `$vars`, the run's id is `$runId`).
 */
export const expressionSchema = z.strictObject({
  expr: z.string().min(1).max(4000).meta({ description: 'A JSONata expression over the bundle.' }),
});
export type Expression = z.infer<typeof expressionSchema>;
export const mappedValueSchema = z.union([expressionSchema, z.json()]).meta({
  id: 'MappedValue',
  description: 'A literal JSON value, or `{"expr": "<JSONata>"}` evaluated against the incoming bundle.',
});
export type MappedValue = z.infer<typeof mappedValueSchema>;

export function isExpression(value: MappedValue): value is Expression {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as Record<string, unknown>).expr === 'string'
  );
}

const variableName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'a variable name is a letter or _ then letters, digits or _');
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'must be an HTTP header name');

const recordIdValue = mappedValueSchema.meta({ description: 'The record id (an integer).' });
/** How a record step names a field: its id or its key. */
const FIELD_NAME = /^[A-Za-z0-9_]{1,64}$/;
const recordFields = z
  .record(z.string().meta({ pattern: FIELD_NAME.source }), mappedValueSchema)
  // Checked here rather than as the key's schema: zod reports a bad record key without its message.
  .superRefine((fields, context) => {
    for (const name of Object.keys(fields))
      if (!FIELD_NAME.test(name))
        context.addIssue({
          code: 'custom',
          path: [name],
          message: 'a field is named by its id or its key (1-64 letters, digits or _)',
        });
  })
  .optional()
  .meta({
    description:
      'Field values by field id (`"12"`) or field key (`"email"`), as the record API takes them; one entry per field.',
  });

/** A field id as a step names it: digits, no leading zero. */
const FIELD_ID_NAME = /^[1-9][0-9]{0,9}$/;

/**
 * The field a record step's `fields` entry names among a module's fields: the one with this key, or with this
 * id. A name that is the key of one field and the id of another names neither (the step must use the other
 * form); `problem` says why a name names no field.
 */
export function stepFieldOf(
  name: string,
  fields: readonly FieldDefinition[],
): { readonly field: FieldDefinition } | { readonly problem: string } {
  const byKey = fields.find((field) => field.key === name);
  const byId = FIELD_ID_NAME.test(name) ? fields.find((field) => field.fieldId === Number(name)) : undefined;
  if (byKey && byId && byKey !== byId)
    return {
      problem: `"${name}" is both the key of field ${byKey.fieldId} and the id of field ${byId.fieldId}: name field ${byKey.fieldId} by its id or field ${byId.fieldId} by its key "${byId.key}"`,
    };
  const field = byKey ?? byId;
  return field ? { field } : { problem: 'no field of the module has this id or key' };
}

/**
 * A record step's `fields` by field key (what a record body takes), or the problems of the names that do not
 * name a field of the module once each (by path `fields.<name>`).
 */
export function fieldsByKey<Value>(
  named: Readonly<Record<string, Value>>,
  fields: readonly FieldDefinition[],
):
  | { readonly values: Record<string, Value> }
  | { readonly problems: ReadonlyArray<{ readonly path: string; readonly message: string }> } {
  const values: Record<string, Value> = {};
  const namedBy = new Map<string, string>();
  const problems: Array<{ path: string; message: string }> = [];
  for (const [name, value] of Object.entries(named)) {
    const found = stepFieldOf(name, fields);
    if ('problem' in found) {
      problems.push({ path: `fields.${name}`, message: found.problem });
      continue;
    }
    const { key, fieldId } = found.field;
    const earlier = namedBy.get(key);
    if (earlier !== undefined)
      problems.push({ path: `fields.${name}`, message: `field ${fieldId} is already set as "${earlier}"` });
    namedBy.set(key, name);
    values[key] = value;
  }
  return problems.length > 0 ? { problems } : { values };
}
export const setVariableStep = z
  .strictObject({ kind: z.literal('setVariable'), name: variableName, value: mappedValueSchema })
  .meta({ id: 'SetVariableStep', description: 'Sets `$vars.<name>` for the steps after it.' });
export const createRecordStep = z
  .strictObject({
    kind: z.literal('createRecord'),
    moduleId: entityIdSchema,
    name: mappedValueSchema.optional().meta({ description: 'The record name (a string).' }),
    fields: recordFields,
  })
  .meta({ id: 'CreateRecordStep', description: 'Creates a record in a module, with the scenario as actor.' });
export const webhookResponseStep = z
  .strictObject({
    kind: z.literal('webhookResponse'),
    status: mappedValueSchema.meta({ description: 'HTTP status: 2xx, 3xx (with a Location header) or 4xx.' }),
    body: mappedValueSchema.optional().meta({ description: 'Text is sent as it is, anything else as JSON.' }),
    headers: z
      .array(z.strictObject({ name: headerName, value: mappedValueSchema }))
      .max(50)
      .optional(),
  })
  .meta({
    id: 'WebhookResponseStep',
    description: "Answers the hook's caller; sent when the run completes, or at once with auto commit.",
  });
export const updateRecordStep = z
  .strictObject({
    kind: z.literal('updateRecord'),
    recordId: recordIdValue,
    name: mappedValueSchema.optional().meta({ description: 'The new record name (a string).' }),
    fields: recordFields,
  })
  .meta({
    id: 'UpdateRecordStep',
    description: 'Changes a record (as PUT /record/{id}); outputs the record.',
  });
export const getRecordStep = z
  .strictObject({ kind: z.literal('getRecord'), recordId: recordIdValue })
  .meta({ id: 'GetRecordStep', description: 'Reads a record; outputs it (a deleted or missing one fails).' });
export const deleteRecordStep = z
  .strictObject({ kind: z.literal('deleteRecord'), recordId: recordIdValue })
  .meta({
    id: 'DeleteRecordStep',
    description: 'Deletes a record (it can be restored, as with DELETE /record/{id}).',
  });
export const searchRecordsStep = z
  .strictObject({
    kind: z.literal('searchRecords'),
    moduleId: entityIdSchema.optional().meta({ description: 'Only this module (its field keys resolve).' }),
    filter: mappedValueSchema.optional().meta({ description: 'A filter in the list language (text).' }),
    order: mappedValueSchema.optional().meta({ description: 'An order in the list language (text).' }),
    limit: z.number().int().min(1).max(100).default(10),
  })
  .meta({
    id: 'SearchRecordsStep',
    description:
      'Finds live records as `GET /record` does (the read models: a record written a moment ago may be missing); outputs `{items, total}`.',
  });
export const attachRecordFileStep = z
  .strictObject({
    kind: z.literal('attachRecordFile'),
    recordId: recordIdValue,
    file: mappedValueSchema.meta({
      description: 'A file a hook received: the reference in the bundle (`{name, mime, size, blobKey}`).',
    }),
    fieldId: entityIdSchema.optional().meta({ description: 'A `file` field of the record to put it in.' }),
  })
  .meta({
    id: 'AttachRecordFileStep',
    description:
      "Attaches a file a hook received to a record, as POST /record/{id}/file would (the platform's file types and size); outputs the file.",
  });
export const labelRecordStep = z
  .strictObject({
    kind: z.enum(['addRecordLabel', 'removeRecordLabel']),
    recordId: recordIdValue,
    labelId: mappedValueSchema.meta({ description: 'The label id (an integer).' }),
  })
  .meta({
    id: 'RecordLabelStep',
    description: 'Adds a label to a record or removes it; outputs its labels.',
  });

/** The methods of calls to other services (HTTP request steps, and the platform's outbound port). */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

/** What an HTTP request step may read of an answer at most. */
export const MAX_HTTP_RESPONSE_BYTES = 5_242_880;
export const httpRequestStep = z
  .strictObject({
    kind: z.literal('httpRequest'),
    method: z.enum(HTTP_METHODS).default('GET'),
    url: mappedValueSchema.meta({ description: 'An http(s) address on the public internet.' }),
    headers: z
      .array(z.strictObject({ name: headerName, value: mappedValueSchema }))
      .max(50)
      .optional(),
    body: mappedValueSchema
      .optional()
      .meta({ description: 'Text is sent as it is; anything else as JSON (with its Content-Type).' }),
    timeoutMs: z.number().int().min(100).max(40_000).default(10_000),
    maxResponseBytes: z
      .number()
      .int()
      .min(1)
      .max(MAX_HTTP_RESPONSE_BYTES)
      .default(1_048_576)
      .meta({ description: 'Bytes of the answer read at most; a longer answer fails the step.' }),
    parse: z.enum(['auto', 'json', 'text', 'binary']).default('auto').meta({
      description:
        'How the answer body is given: auto (JSON for a JSON type, text for a text type, else binary), or as said; binary is `{encoding: "base64", data}`.',
    }),
    failOnHttpError: z.boolean().default(true).meta({
      description: 'An answer of 400 or more fails the run (else it is the output like any other).',
    }),
  })
  .meta({
    id: 'HttpRequestStep',
    description:
      "Calls another service through the platform's SSRF guard (public addresses only, redirects not followed); outputs `{status, headers, body, bytes, durationMs}`.",
  });

export const setVariablesStep = z
  .strictObject({
    kind: z.literal('setVariables'),
    variables: z
      .array(z.strictObject({ name: variableName, value: mappedValueSchema }))
      .min(1, 'at least one variable')
      .max(50, 'at most 50 variables'),
  })
  .meta({
    id: 'SetVariablesStep',
    description: 'Sets several `$vars.<name>` at once, each mapped from what was there before the step.',
  });
export const filterStep = z
  .strictObject({
    kind: z.literal('filter'),
    label: z.string().trim().min(1).max(200).optional(),
    condition: mappedValueSchema.meta({
      description: 'Passes when true (JSONata truthiness: not false, null, 0, "" or empty).',
    }),
  })
  .meta({
    id: 'FilterStep',
    description:
      'Lets the run go on only when its condition holds; otherwise the run ends here, successfully (a Webhook response already set is still sent).',
  });
export const jsonParseStep = z
  .strictObject({
    kind: z.literal('jsonParse'),
    name: variableName,
    text: mappedValueSchema.meta({ description: 'JSON text, at most 5 MB.' }),
  })
  .meta({
    id: 'JsonParseStep',
    description: 'Parses JSON text into `$vars.<name>`; text that is not JSON fails the run.',
  });
export const jsonCreateStep = z
  .strictObject({ kind: z.literal('jsonCreate'), name: variableName, value: mappedValueSchema })
  .meta({ id: 'JsonCreateStep', description: 'Writes a value as JSON text into `$vars.<name>`.' });
const routeSchema = z
  .strictObject({
    label: z.string().trim().min(1).max(200).optional(),
    filter: mappedValueSchema
      .optional()
      .meta({ description: 'The route is taken when this holds (no filter: always).' }),
    get steps(): z.ZodArray<typeof scenarioStepSchema> {
      return z.array(scenarioStepSchema).max(100, 'at most 100 steps');
    },
  })
  .meta({ id: 'ScenarioRoute' });
export const routerStep = z
  .strictObject({
    kind: z.literal('router'),
    routes: z.array(routeSchema).min(1, 'at least one route').max(10, 'at most 10 routes'),
  })
  .meta({
    id: 'RouterStep',
    description:
      'Runs each route whose filter holds, one after the other, with the bundle and the variables so far; the steps after the router run once all routes are done.',
  });
export const iteratorStep = z
  .strictObject({
    kind: z.literal('iterator'),
    array: mappedValueSchema.meta({ description: 'The array to split (at most 10,000 items).' }),
  })
  .meta({
    id: 'IteratorStep',
    description:
      'Runs the steps after it once per item (`$item`, `$index`), up to the matching aggregator or the end of its list; each item starts from the variables before the iterator.',
  });
export const aggregatorStep = z
  .strictObject({
    kind: z.literal('aggregator'),
    name: variableName,
    value: mappedValueSchema.meta({ description: "Evaluated at the end of each item's steps." }),
  })
  .meta({
    id: 'AggregatorStep',
    description:
      'Ends the iteration of the iterator before it: `$vars.<name>` is the array of `value` for each item that got through (a filter may have stopped some); the steps after it run once.',
  });
export const scenarioStepSchema = z
  .discriminatedUnion('kind', [
    setVariableStep,
    setVariablesStep,
    filterStep,
    jsonParseStep,
    jsonCreateStep,
    createRecordStep,
    updateRecordStep,
    getRecordStep,
    deleteRecordStep,
    searchRecordsStep,
    attachRecordFileStep,
    labelRecordStep,
    webhookResponseStep,
    httpRequestStep,
    routerStep,
    iteratorStep,
    aggregatorStep,
  ])
  .meta({ id: 'ScenarioStep' });
export type ScenarioStep = z.infer<typeof scenarioStepSchema>;
export type ScenarioRoute = z.infer<typeof routeSchema>;

/** Every step of a list and of its routes, with where it is (`3`, `3.routes.1.steps.0`). */
export function everyStep(
  steps: readonly ScenarioStep[],
  prefix = '',
): Array<{ readonly step: ScenarioStep; readonly path: string }> {
  return steps.flatMap((step, index) => [
    { step, path: `${prefix}${index}` },
    ...(step.kind === 'router'
      ? step.routes.flatMap((route, routeIndex) =>
          everyStep(route.steps, `${prefix}${index}.routes.${routeIndex}.steps.`),
        )
      : []),
  ]);
}

/** The modules and labels a scenario's steps name by literal id (what an import may have to remap). */
export function stepReferences(steps: readonly ScenarioStep[]): { moduleIds: number[]; labelIds: number[] } {
  const moduleIds = new Set<number>();
  const labelIds = new Set<number>();
  for (const { step } of everyStep(steps)) {
    if ((step.kind === 'createRecord' || step.kind === 'searchRecords') && step.moduleId !== undefined)
      moduleIds.add(step.moduleId);
    if (
      (step.kind === 'addRecordLabel' || step.kind === 'removeRecordLabel') &&
      typeof step.labelId === 'number'
    )
      labelIds.add(step.labelId);
  }
  const ascending = (ids: Set<number>) => [...ids].sort((a, b) => a - b);
  return { moduleIds: ascending(moduleIds), labelIds: ascending(labelIds) };
}

/** The steps with the literal module and label ids they name replaced as `moduleIds`/`labelIds` say (others kept). */
export function remapSteps(
  steps: readonly ScenarioStep[],
  moduleIds: Readonly<Record<string, number>>,
  labelIds: Readonly<Record<string, number>>,
): ScenarioStep[] {
  const module = (id: number) => moduleIds[String(id)] ?? id;
  return steps.map((step): ScenarioStep => {
    switch (step.kind) {
      case 'createRecord':
        return { ...step, moduleId: module(step.moduleId) };
      case 'searchRecords':
        return step.moduleId === undefined ? step : { ...step, moduleId: module(step.moduleId) };
      case 'addRecordLabel':
      case 'removeRecordLabel':
        return typeof step.labelId === 'number'
          ? { ...step, labelId: labelIds[String(step.labelId)] ?? step.labelId }
          : step;
      case 'router':
        return {
          ...step,
          routes: step.routes.map((route) => ({
            ...route,
            steps: remapSteps(route.steps, moduleIds, labelIds),
          })),
        };
      default:
        return step;
    }
  });
}

/** Every value a step maps (to check its expressions before the scenario is saved). */
export function mappedValuesOf(step: ScenarioStep): Array<MappedValue | undefined> {
  switch (step.kind) {
    case 'setVariable':
      return [step.value];
    case 'setVariables':
      return step.variables.map((variable) => variable.value);
    case 'filter':
      return [step.condition];
    case 'jsonParse':
      return [step.text];
    case 'jsonCreate':
      return [step.value];
    case 'createRecord':
      return [step.name, ...Object.values(step.fields ?? {})];
    case 'updateRecord':
      return [step.recordId, step.name, ...Object.values(step.fields ?? {})];
    case 'getRecord':
    case 'deleteRecord':
      return [step.recordId];
    case 'searchRecords':
      return [step.filter, step.order];
    case 'attachRecordFile':
      return [step.recordId, step.file];
    case 'addRecordLabel':
    case 'removeRecordLabel':
      return [step.recordId, step.labelId];
    case 'webhookResponse':
      return [step.status, step.body, ...(step.headers ?? []).map((header) => header.value)];
    case 'httpRequest':
      return [step.url, step.body, ...(step.headers ?? []).map((header) => header.value)];
    case 'router':
      return step.routes.map((route) => route.filter);
    case 'iterator':
      return [step.array];
    case 'aggregator':
      return [step.value];
  }
}

/** The aggregator that closes the iterator at `iterator` (iterators nest), if any before `to`. */
export function matchingAggregator(
  steps: readonly ScenarioStep[],
  iterator: number,
  to = steps.length,
): number | undefined {
  let open = 0;
  for (let index = iterator + 1; index < to; index++) {
    const kind = steps[index]!.kind;
    if (kind === 'iterator') open += 1;
    else if (kind === 'aggregator') {
      if (open === 0) return index;
      open -= 1;
    }
  }
  return undefined;
}

/** What is wrong with the shape of a list of steps (an aggregator with no iterator, nesting too deep, too many). */
export function stepStructureIssues(
  steps: readonly ScenarioStep[],
  limits = { depth: 5, total: 500 },
): Array<{ readonly path: string; readonly message: string }> {
  const issues: Array<{ path: string; message: string }> = [];
  let total = 0;
  const check = (list: readonly ScenarioStep[], path: string, depth: number): void => {
    let open = 0;
    for (const [index, step] of list.entries()) {
      total += 1;
      if (step.kind === 'iterator') open += 1;
      if (step.kind === 'aggregator') {
        if (open === 0)
          issues.push({
            path: `${path}${index}`,
            message: 'an aggregator needs an iterator before it in its list',
          });
        else open -= 1;
      }
      if (step.kind === 'router') {
        if (depth > limits.depth)
          issues.push({ path: `${path}${index}`, message: `routers nest at most ${limits.depth} deep` });
        else
          for (const [route, { steps: routeSteps }] of step.routes.entries())
            check(routeSteps, `${path}${index}.routes.${route}.steps.`, depth + 1);
      }
    }
  };
  check(steps, '', 1);
  if (total > limits.total)
    issues.push({ path: '', message: `at most ${limits.total} steps in all, routes included` });
  return issues;
}

export const scheduleSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('instant') }),
    z.strictObject({
      kind: z.literal('interval'),
      minutes: z.number().int().min(1).max(44_640).meta({ description: 'Minutes between runs.' }),
    }),
  ])
  .meta({
    id: 'ScenarioSchedule',
    description: 'Instant: each request runs at once. Interval: queued requests run on schedule.',
  });
export type Schedule = z.infer<typeof scheduleSchema>;

export const scenarioSettingsShape = {
  name: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  webhookId: entityIdSchema
    .nullable()
    .meta({ description: 'The webhook that triggers it (one scenario each).' }),
  schedule: scheduleSchema,
  sequential: z.boolean().meta({ description: 'Run one request at a time, in arrival order.' }),
  autoCommit: z
    .boolean()
    .meta({ description: 'Send a Webhook response when its step runs, not at the end.' }),
  steps: z
    .array(scenarioStepSchema)
    .max(100, 'at most 100 steps')
    .superRefine((steps, context) => {
      for (const issue of stepStructureIssues(steps))
        context.addIssue({
          code: 'custom',
          message: issue.message,
          path: issue.path
            .split('.')
            .filter(Boolean)
            .map((part) => (/^\d+$/.test(part) ? Number(part) : part)),
        });
    }),
};
export const scenarioSettingsSchema = z.object(scenarioSettingsShape);
export type ScenarioSettings = z.infer<typeof scenarioSettingsSchema>;

/** A file that came with a request: its bytes are in the blob store. */
export const hookFileSchema = z.object({
  field: z.string(),
  name: z.string(),
  mime: z.string(),
  size: z.number().int().nonnegative(),
  blobKey: z.string(),
});
export type StoredHookFile = z.infer<typeof hookFileSchema>;

/** An incoming request as the logs show it. */
export const hookRequestSchema = z.object({
  method: z.string(),
  url: z.string(),
  headers: z.array(z.object({ name: z.string(), value: z.string() })),
  query: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
  /** The body as text (JSON, form or plain text); multipart bodies show their fields instead. */
  body: z.string().nullable(),
  contentType: z.string().nullable(),
  bytes: z.number().int().nonnegative(),
  ip: z.string(),
  files: z.array(hookFileSchema),
});
export type HookRequestRecord = z.infer<typeof hookRequestSchema>;

/** The blobs of the files a request brought (none when its data was erased: it reads as the placeholder). */
export function fileBlobKeysOf(request: unknown): string[] {
  const files = (request as { files?: unknown } | null | undefined)?.files;
  if (!Array.isArray(files)) return [];
  return files.flatMap((file: unknown) => {
    const blobKey = (file as { blobKey?: unknown } | null)?.blobKey;
    return typeof blobKey === 'string' && blobKey.length > 0 ? [blobKey] : [];
  });
}

export const hookResponseSchema = z.object({
  status: z.number().int(),
  headers: z.array(z.object({ name: z.string(), value: z.string() })),
  /** Text as sent; JSON bodies as their text. */
  body: z.string(),
});
export type HookResponse = z.infer<typeof hookResponseSchema>;
