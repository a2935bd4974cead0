import type { DataStructure, Reason } from '../../../languages/data-structure';
import {
  HOOK_ACCEPTED,
  HOOK_MAX_BODY_BYTES,
  HOOK_REQUESTS_PER_SECOND,
  HOOK_SCENARIO_FAILED,
  MAIL_MAX_BYTES,
  type HookKind,
  type HookResponse,
} from '../../../contracts/integrator';
import type { IpAllowlist } from '../../../contracts/ip-allowlist';
import { hasWebhookResponse, type ScenarioState } from '../../scenarios/domain/scenario';
import { effectiveStatus, type WebhookState } from './webhook';

/**
 * The decisions of receiving for a hook, as pure rules over what the intake found out: whether a request is
 * refused (and with which answer), where its files go, whether it runs now or is queued, whether its caller
 * waits for the run's response, whether its payload stays in the event, and the answer a run's outcome gives.
 */

/** A refusal: the status and the short text the spec answers, and any headers (Retry-After). */
export interface IntakeRefusal {
  readonly status: number;
  readonly message: string;
  readonly headers: Readonly<Record<string, string>>;
}

function refusal(status: number, message: string, headers: Record<string, string> = {}): IntakeRefusal {
  return { status, message, headers };
}

/** Requests and bundles bigger than this go to the blob store; the event keeps their key. */
export const INLINE_PAYLOAD_BYTES = 256 * 1024;

/** Whether a payload of `bytes` stays in its event (else it goes to the blob store). */
export function keptInline(bytes: number): boolean {
  return bytes <= INLINE_PAYLOAD_BYTES;
}

/** The most a hook of a kind takes: 5 MB requests, 25 MB emails (attachments included). */
export function maxBytesOf(kind: HookKind): number {
  return kind === 'mail' ? MAIL_MAX_BYTES : HOOK_MAX_BODY_BYTES;
}

/** The answer to an address that names no hook, or no hook of the receiver's kind. */
export const NO_SUCH_HOOK = refusal(404, 'No hook has this id.');

/** What the intake knows when a request to a hook's address arrives, before its body is read. */
export interface OpeningFacts {
  /** The hook the address names, as it stands. */
  readonly hook: WebhookState;
  /** The addresses that may call it (its IP restrictions). */
  readonly allowlist: IpAllowlist;
  /** What the receiver takes: HTTP requests or email. */
  readonly kind: HookKind;
  readonly now: Date;
  /** The caller's address; null for a delivery from inside the platform (never restricted). */
  readonly caller: string | null;
  readonly declaredBytes: number;
}

/**
 * The checks before a hook's body is read (the rate aside, which counts): its state and kind, the caller's
 * address, the declared size. Null: the request may go on.
 */
export function openingRefusal(facts: OpeningFacts): IntakeRefusal | null {
  const { hook, allowlist } = facts;
  const status = effectiveStatus(hook, facts.now);
  if (status === 'none' || hook.kind !== facts.kind) return NO_SUCH_HOOK;
  if (status === 'deactivated')
    return refusal(410, 'This hook was deactivated: it had no scenario for more than 120 hours.');
  if (status === 'disabled') return refusal(403, 'This hook is disabled.');
  if (facts.caller !== null && !allowlist.allows(facts.caller))
    return refusal(403, 'This address may not call this hook.');
  const maxBytes = maxBytesOf(facts.kind);
  if (facts.declaredBytes > maxBytes) return refusal(413, `The body is over the limit of ${maxBytes} bytes.`);
  return null;
}

/**
 * The hook's rate, given the times (ms) of its counted requests in the last second, this one included: past
 * 30, a refusal saying when the oldest that counts leaves the window. Null: within the rate.
 */
export function rateRefusal(countedTimes: readonly number[], now: number): IntakeRefusal | null {
  if (countedTimes.length <= HOOK_REQUESTS_PER_SECOND) return null;
  const oldest = countedTimes[countedTimes.length - 1 - HOOK_REQUESTS_PER_SECOND] ?? now;
  return refusal(429, 'Too many requests: a hook takes 30 requests per second.', {
    'Retry-After': String(Math.max(1, Math.ceil((oldest + 1000 - now) / 1000))),
  });
}

/**
 * The files of a request by field, as the data structure validates them. A web request's file parts need a
 * collection or array field of the structure; an email's attachments always have theirs.
 */
export function filesByField<File extends { readonly field: string }>(
  files: readonly File[],
  structures: readonly DataStructure[],
  kind: HookKind,
): { readonly refusal: IntakeRefusal } | { readonly byField: ReadonlyMap<string, readonly File[]> } {
  const byField = new Map<string, File[]>();
  for (const file of files) {
    const field = structures
      .flatMap((structure) => structure.fields)
      .find((candidate) => candidate.name === file.field);
    if (kind === 'web' && field?.type !== 'collection' && field?.type !== 'array')
      return {
        refusal: refusal(
          400,
          `File part "${file.field}" is not in the hook's data structure: add a collection field "${file.field}" with name (text), mime (text) and data (buffer).`,
        ),
      };
    byField.set(file.field, [...(byField.get(file.field) ?? []), file]);
  }
  return { byField };
}

/** A field's files in the bundle: a web hook's one file is a value, several an array; an email's always an array. */
export function filesValue<File>(kind: HookKind, files: readonly File[]): File | readonly File[] {
  return files.length === 1 && kind === 'web' ? files[0]! : files;
}

/** The refusal of data that does not match one of the hook's data structures. */
export function mismatchRefusal(reasons: readonly Reason[]): IntakeRefusal {
  return refusal(
    400,
    `The data does not match the hook's data structure: ${reasons
      .map((reason) => `${reason.path}: ${reason.message}`)
      .join('; ')}`,
  );
}

/** What the intake knows of an accepted request's hook and scenario. */
export interface ReceivingFacts {
  readonly hook: WebhookState;
  /** The scenario the hook triggers, as it is now; null when the hook triggers none. */
  readonly scenario: ScenarioState | null;
  /** Whether this process hears runs' Webhook responses (absent where only mail is received). */
  readonly hearsResponses: boolean;
}

/** Where an accepted request goes: its own run now, or the hook's queue (for a schedule, or its scenario). */
export type Delivery =
  | {
      readonly kind: 'run';
      /** A sequential scenario's requests run in arrival order. */
      readonly sequential: boolean;
      /** Its caller waits for the run's Webhook response. */
      readonly awaitsResponse: boolean;
    }
  | { readonly kind: 'queue'; readonly capacity: number };

export interface ReceivingDecision {
  readonly delivery: Delivery;
  /** The scenario the request's event names: the hook's, unless that was deleted (null). */
  readonly scenarioId: number | null;
  /** The request's shape is to be kept with the hook: after a Re-determine, or while it has no structure. */
  readonly determinesStructure: boolean;
}

/**
 * An accepted request runs at once when its hook's scenario is active and instant, else it is queued. Only a
 * web request's caller waits for a response, and only where the scenario answers and this process hears it.
 */
export function receivingDecision(facts: ReceivingFacts): ReceivingDecision {
  const { hook, scenario } = facts;
  const runsNow = scenario?.status === 'active' && scenario.settings.schedule.kind === 'instant';
  const delivery: Delivery = runsNow
    ? {
        kind: 'run',
        sequential: scenario.settings.sequential,
        awaitsResponse: hook.kind === 'web' && hasWebhookResponse(scenario.settings) && facts.hearsResponses,
      }
    : { kind: 'queue', capacity: hook.settings.queueCapacity };
  return {
    delivery,
    scenarioId: scenario && scenario.status !== 'deleted' ? hook.scenarioId : null,
    determinesStructure:
      hook.redetermining || (hook.determinedStructure === null && hook.settings.dataStructure === null),
  };
}

/** How a run the receiver waits for ended, as far as its caller is concerned. */
export type RunOutcome =
  | { readonly kind: 'response'; readonly response: HookResponse }
  | { readonly kind: 'failed' }
  | { readonly kind: 'finished' }
  | { readonly kind: 'timeout' };

export const ACCEPTED_ANSWER: HookResponse = { status: 200, headers: [], body: HOOK_ACCEPTED };

/** The answer to a request whose caller waited: the run's response, a failure, or `Accepted`. */
export function answerOf(outcome: RunOutcome): HookResponse {
  if (outcome.kind === 'response') return outcome.response;
  if (outcome.kind === 'failed') return { status: 500, headers: [], body: HOOK_SCENARIO_FAILED };
  return ACCEPTED_ANSWER;
}
