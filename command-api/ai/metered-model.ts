import { ERASED_VALUE } from '../../contracts/personal-data';
import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AiSpendingPurpose } from '../../contracts/events/ai';
import { PlatformError } from '../../contracts/errors';
import { streamName } from '../../contracts/streams';
import {
  LanguageModelError,
  type Completion,
  type CompletionRequest,
  type LanguageModel,
} from '../../infra/ai/language-model/port';
import { insufficientBalance } from '../../contracts/ai-balance';
import {
  AI_BALANCE_STREAM_ID,
  aiBalanceDecider,
  balanceView,
  type AiBalanceCommand,
  type AiBalanceState,
} from './domain/ai-balance';
import { aiAnswerDecider, type KeepAnswer, type KeptAnswer } from './domain/ai-answer';
import { withCommandId, type CommandOrigin, type CommandHandler, type CommandResult } from '../kit/handler';
import { OneAtATime } from '../kit/one-at-a-time';

/** How to set a model up, for the answer of an AI route on a system that has none. */
const NO_MODEL_MESSAGE =
  'no language model is configured for this system: set AI_URL (an OpenAI-compatible endpoint such as ' +
  'https://api.openai.com/v1, Azure, Ollama or vLLM), AI_MODEL and AI_API_KEY for the deployment, or have ' +
  'an operator administrator set one for this system with PUT /system/{system}/ai';

export interface MeteredModelOptions {
  readonly handler: CommandHandler;
  /** The model a system uses (null: none configured). */
  readonly modelFor: (tenant: string) => Promise<LanguageModel | null>;
  readonly now: () => Date;
  /** How long a reservation holds tokens if its call never settles (the process died). */
  readonly reservationHoldMs: number;
  /**
   * `AI_TIMEOUT_MS`: the longest a request's call (a preview, a generation) may take, its retry and waits
   * included, and a job's record call for each of its attempts (see `budgetOf`); an endpoint's `Retry-After`
   * never makes a caller wait longer. Must leave `SETTLE_MARGIN_MS` of `reservationHoldMs`.
   */
  readonly callTimeoutMs: number;
  /** Waits between attempts; the endpoint's `Retry-After` wins when it says longer. */
  readonly backoffMs: (attempt: number) => number;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Told of every call: how it ended and what it spent (for metrics). */
  readonly observe?: (outcome: 'answered' | 'cached' | 'failed' | 'refused', tokens: number) => void;
  /** Told when a model reports more than its call reserved: the excess is not charged (for logs). */
  readonly onExcessUsage?: (excess: { tenant: string; reported: number; charged: number }) => void;
}

export interface MeteredCall {
  readonly tenant: string;
  readonly purpose: AiSpendingPurpose;
  readonly request: CompletionRequest;
  /** Attempts at most when the model is rate limited, unavailable or slow (1: no retry). */
  readonly attempts: number;
  /**
   * Keep the answer under the digest of the request, and answer from it when asked the same again; paid by
   * this (a job's record, `aiJob:<job>:<record>`): asked again by the same payer (the job run again after a
   * crash), the kept answer answers with what it cost, and its spending is settled once. Absent: not kept.
   */
  readonly keptFor?: string;
  /**
   * The record whose data the request carries: its kept answer is that record's alone (the digest names it)
   * and sealed under its data key, so erasing the record erases the answer too.
   */
  readonly forRecord?: number;
  /** Who the balance's events are by. */
  readonly context: CommandOrigin;
  /** The reservation block of a job: its calls draw their estimates from it (see `ReservationBlock`). */
  readonly block?: ReservationBlock;
}

/** How much of which reservation a call holds: all of its own, or its estimate out of a job's block. */
interface Held {
  readonly reservationId: string;
  /** The tokens of a block the call holds (undefined: the whole reservation is the call's). */
  readonly fromBlock?: number;
  /** When the reservation lapses (epoch ms). */
  readonly until: number;
}

/**
 * What a call leaves itself, at least, between its end (its deadline) and its reservation's lapse, to charge
 * what it spent: a call never outlives its reservation, so no one else can have reserved its tokens meanwhile.
 */
export const SETTLE_MARGIN_MS = 30_000;

/**
 * The reservation of a job's calls: one reservation covers several calls' estimates (a block), so a large
 * execute appends one reservation per block rather than one per record. Each call's spending settles its
 * estimate out of the block; the block's rest is let go when it runs short, or when the job ends. When the
 * balance cannot cover a whole block, calls reserve one by one (each still refused when it cannot be covered).
 */
export class ReservationBlock {
  reservationId: string | null = null;
  remaining = 0;
  /** When the block's reservation lapses (epoch ms). */
  until = 0;
  readonly turns = new OneAtATime();

  constructor(
    readonly tenant: string,
    readonly context: CommandOrigin,
    /** Calls one block covers. */
    readonly calls: number,
    /** The job it is for (`aiJob:<job>`): its reservations say so, and the job's end lets go any left. */
    readonly heldFor?: string,
  ) {}
}

export interface MeteredAnswer {
  readonly text: string;
  readonly model: string;
  /** What this call spent (0 when answered from the cache). */
  readonly tokens: number;
  readonly cached: boolean;
  readonly finishReason: string;
  /** The position of what the call spent (undefined when it spent nothing): `X-Position` for the answer. */
  readonly position?: bigint;
  /** What was asked, as a digest (when the answer is kept): the same digest is the same question. */
  readonly digest?: string;
}

/**
 * The usage as a model reports it is untrusted: a count is a finite non-negative number (a fraction counts as
 * the next whole token); anything else (negative, NaN, a string, missing) is no report, and the estimate is charged.
 * A reported `-0` counts as 0 (`Math.ceil(-0)` is `-0`, which would reach the answer and the ledger as a different number).
 */
const reportedCount = z
  .number()
  .finite()
  .nonnegative()
  .transform((count) => Math.max(0, Math.ceil(count)));
const reportedUsage = z.object({ promptTokens: reportedCount, completionTokens: reportedCount });

/** What a call is charged: what the model reports, never more than the call reserved (`estimate`). */
function chargeOf(
  completion: Completion,
  request: CompletionRequest,
  estimate: number,
): { promptTokens: number; completionTokens: number; reported: boolean; excess: number } {
  const usage = reportedUsage.safeParse(completion.usage);
  if (!usage.success)
    return {
      promptTokens: estimate - request.maxOutputTokens,
      completionTokens: request.maxOutputTokens,
      reported: false,
      excess: 0,
    };
  const promptTokens = Math.min(usage.data.promptTokens, estimate);
  const completionTokens = Math.min(usage.data.completionTokens, estimate - promptTokens);
  const excess = usage.data.promptTokens + usage.data.completionTokens - promptTokens - completionTokens;
  return { promptTokens, completionTokens, reported: true, excess };
}

/** The command id of the spending of a kept answer: one per answer and payer, so it is settled once. */
function keptSpendingCommandId(digest: string, payer: string): string {
  return `aiSpend:${digest}:${payer}`;
}

/** A conservative guess of the tokens a request takes: its text at 3 characters a token, and the answer's limit. */
function estimateTokens(request: CompletionRequest): number {
  const characters = request.messages.reduce((sum, message) => sum + message.content.length, 0);
  return Math.ceil(characters / 3) + 8 * request.messages.length + request.maxOutputTokens;
}

/** What the request asks, as one digest: the same digest is the same question to the same model. */
function requestDigest(modelName: string, request: CompletionRequest, forRecord: number | undefined): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        modelName,
        request.messages,
        request.maxOutputTokens,
        request.temperature ?? null,
        request.json === true,
        // Only when there is one: the digests of answers kept before records were named stay the same.
        ...(forRecord === undefined ? [] : [forRecord]),
      ]),
    )
    .digest('base64url');
}

function platformErrorOf(error: LanguageModelError): PlatformError {
  switch (error.reason) {
    case 'rate-limited':
    case 'unavailable':
      return new PlatformError('unavailable', `the language model is unavailable: ${error.message}`, {
        ...(error.retryAfterMs !== undefined && { retryAfterMs: error.retryAfterMs }),
      });
    case 'timeout':
      return new PlatformError(
        'upstream_timeout',
        `the language model did not answer in time: ${error.message}`,
      );
    case 'misconfigured':
      return new PlatformError('upstream_failed', `the language model is not set up right: ${error.message}`);
    case 'refused':
      return new PlatformError('upstream_failed', `the language model refused the request: ${error.message}`);
  }
}

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Every model call of the platform, metered: refused before the call when the system's AI token balance
 * cannot cover its estimate (402, nothing spent), retried with backoff while the model is rate limited,
 * unavailable or slow, and charged what the model reports it used (the estimate when it reports nothing).
 * A failed call spends nothing. Answers to be kept (executes) are recorded under the digest of the request,
 * so asking the same again spends nothing.
 */
export class MeteredModel {
  /** Balance commands of one system go in turn in this process: they all append to its one stream. */
  private readonly balanceTurns = new OneAtATime();
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(private readonly options: MeteredModelOptions) {
    this.sleep = options.sleep ?? defaultSleep;
    if (options.reservationHoldMs < options.callTimeoutMs + SETTLE_MARGIN_MS)
      throw new Error('a reservation must hold its tokens for a whole call and SETTLE_MARGIN_MS after it');
  }

  /** The system's model; a 501 that says how to configure one when there is none. */
  async modelOf(tenant: string): Promise<LanguageModel> {
    const model = await this.options.modelFor(tenant);
    if (!model) throw new PlatformError('not_configured', NO_MODEL_MESSAGE);
    return model;
  }

  async complete(call: MeteredCall): Promise<MeteredAnswer> {
    const model = await this.modelOf(call.tenant);
    const modelName = call.request.model ?? model.model;
    const payer = call.keptFor;
    const digest = payer === undefined ? null : requestDigest(modelName, call.request, call.forRecord);
    let answerStream = digest === null ? null : streamName('aiAnswer', call.tenant, digest);
    if (answerStream !== null) {
      // Not through the aggregate cache: an answer is read once or twice, and may be long.
      const { state: kept, position } = await this.options.handler.peek(answerStream, aiAnswerDecider);
      // Its record was erased since (and asked the same all the same): asked anew, and not kept again.
      if (kept?.text === ERASED_VALUE) answerStream = null;
      else if (kept !== null && kept.paidBy === payer)
        return this.answerPaidBefore(call, kept, digest!, payer!, position!);
      else if (kept !== null && kept.cut !== true) {
        this.options.observe?.('cached', 0);
        return {
          text: kept.text,
          model: kept.model,
          tokens: 0,
          cached: true,
          finishReason: 'stop',
          digest: digest!,
        };
      }
    }

    const estimate = estimateTokens(call.request);
    let held: Held;
    try {
      held = await this.hold(call, estimate);
    } catch (error) {
      if (error instanceof PlatformError && error.kind === 'ai_balance_insufficient')
        this.options.observe?.('refused', 0);
      throw error;
    }
    let completion: Completion;
    try {
      const deadline = Math.min(
        this.options.now().getTime() + this.budgetOf(call),
        held.until - SETTLE_MARGIN_MS,
      );
      completion = await this.withRetries(model, call, deadline);
    } catch (error) {
      this.options.observe?.('failed', 0);
      await this.letGo(call, held);
      throw error instanceof LanguageModelError ? platformErrorOf(error) : error;
    }
    const { promptTokens, completionTokens, reported, excess } = chargeOf(completion, call.request, estimate);
    if (excess > 0)
      this.options.onExcessUsage?.({
        tenant: call.tenant,
        reported: promptTokens + completionTokens + excess,
        charged: promptTokens + completionTokens,
      });
    const cut = completion.finishReason === 'length';
    let spendingCommandId: string = randomUUID();
    let keptAt: bigint | undefined;
    try {
      if (answerStream !== null) {
        // Kept before it is charged, with its payer: a crash between the two leaves the answer, and the job run
        // again settles its spending (once, by its command id) and shows it on the record's outcome.
        const keep: KeepAnswer = {
          digest: digest!,
          text: completion.text,
          model: completion.model,
          promptTokens,
          completionTokens,
          paidBy: payer!,
          ...(call.forRecord !== undefined && { forRecord: call.forRecord }),
          reservationId: held.reservationId,
          ...(held.fromBlock !== undefined && { settles: held.fromBlock }),
          ...(cut && { cut: true as const }),
        };
        keptAt = (
          await this.options.handler.handle(
            answerStream,
            aiAnswerDecider,
            keep,
            withCommandId(call.context, randomUUID()),
            // Read empty a moment ago; a call asking the same meanwhile made it first: then the append fails its
            // expectation, the handler reads it, and the decider keeps the answer there.
            { newStream: true, uncached: true },
          )
        ).position;
        if (keptAt !== undefined) spendingCommandId = keptSpendingCommandId(digest!, payer!);
      }
    } catch (error) {
      await this.letGo(call, held);
      throw error;
    }
    let spent: CommandResult<AiBalanceState>;
    try {
      spent = await this.balance(
        call,
        {
          kind: 'Spend',
          reservationId: held.reservationId,
          ...(held.fromBlock !== undefined && { settles: held.fromBlock }),
          now: this.options.now(),
          promptTokens,
          completionTokens,
          reported,
          model: completion.model,
          purpose: call.purpose,
        },
        spendingCommandId,
      );
    } catch (error) {
      // Never left held: what the call spent is then not charged (logged by the caller), the balance stays usable.
      await this.letGo(call, held).catch(() => undefined);
      throw error;
    }
    this.options.observe?.('answered', promptTokens + completionTokens);
    return {
      text: completion.text,
      model: completion.model,
      tokens: promptTokens + completionTokens,
      cached: false,
      finishReason: completion.finishReason,
      ...(spent.position !== undefined && { position: spent.position }),
      ...(digest !== null && { digest }),
    };
  }

  /**
   * The payer's own answer, kept before a crash cut its call short: its spending is settled now unless it was
   * (looked for after the answer's position, by its command id), and the answer says what it cost.
   */
  private async answerPaidBefore(
    call: MeteredCall,
    kept: KeptAnswer,
    digest: string,
    payer: string,
    keptAt: bigint,
  ): Promise<MeteredAnswer> {
    const spent = await this.balance(
      call,
      {
        kind: 'Spend',
        reservationId: kept.reservationId ?? null,
        ...(kept.settles !== undefined && { settles: kept.settles }),
        now: this.options.now(),
        promptTokens: kept.promptTokens,
        completionTokens: kept.completionTokens,
        reported: true,
        model: kept.model,
        purpose: call.purpose,
      },
      keptSpendingCommandId(digest, payer),
      keptAt,
    );
    const tokens = kept.promptTokens + kept.completionTokens;
    this.options.observe?.(spent.replayed ? 'cached' : 'answered', spent.replayed ? 0 : tokens);
    return {
      text: kept.text,
      model: kept.model,
      tokens,
      cached: false,
      finishReason: kept.cut === true ? 'length' : 'stop',
      ...(spent.position !== undefined && { position: spent.position }),
      digest,
    };
  }

  /**
   * Refuses (402) work whose first call the balance cannot cover, before anything is started: an execute that
   * could do nothing is no job. Each call still reserves its own estimate when it comes.
   */
  async assertCovers(tenant: string, what: string, request: CompletionRequest): Promise<void> {
    const balance = await this.options.handler.load(balanceStream(tenant), aiBalanceDecider);
    const needed = estimateTokens(request);
    const { available } = balanceView(balance.state, this.options.now());
    if (available < needed) throw insufficientBalance(what, needed, available);
  }

  /**
   * Lets go every reservation still held for a job that ended (`ReservationBlock.heldFor`): what a process that
   * died while running it had reserved no longer waits out its lapse.
   */
  async releaseHeldFor(call: Pick<MeteredCall, 'tenant' | 'context'>, heldFor: string): Promise<void> {
    await this.balance(call, { kind: 'ReleaseHeldFor', heldFor, now: this.options.now() });
  }

  /** Lets the rest of a job's block go. */
  async closeBlock(block: ReservationBlock): Promise<void> {
    await block.turns.run('block', async () => {
      if (block.reservationId === null) return;
      const reservationId = block.reservationId;
      block.reservationId = null;
      block.remaining = 0;
      await this.release(block, reservationId);
    });
  }

  /**
   * How long a call may take, retries and waits included: `AI_TIMEOUT_MS` for a request someone waits on; a job's
   * record call (it has a block) that for each of its attempts, so its retries get their time. A call's deadline
   * is also never later than `SETTLE_MARGIN_MS` before its reservation lapses.
   */
  private budgetOf(call: MeteredCall): number {
    return call.block === undefined ? this.options.callTimeoutMs : this.options.callTimeoutMs * call.attempts;
  }

  /** Reserves the call's estimate: out of its job's block when it has one, else a reservation of its own. */
  private async hold(call: MeteredCall, estimate: number): Promise<Held> {
    const own = (): Promise<Held> => this.reserve(call, estimate, call.block?.heldFor);
    const block = call.block;
    if (block === undefined || block.calls <= 1) return own();
    const fromBlock = await block.turns.run('block', async (): Promise<Held | null> => {
      // A block that would lapse before a call drawn from it now ends (see SETTLE_MARGIN_MS) is not drawn from.
      const lastsTheCall =
        block.until - this.options.now().getTime() >= this.budgetOf(call) + SETTLE_MARGIN_MS;
      if (block.reservationId === null || block.remaining < estimate || !lastsTheCall) {
        if (block.reservationId !== null) await this.release(call, block.reservationId);
        block.reservationId = null;
        block.remaining = 0;
        const tokens = estimate * block.calls;
        let reserved: { reservationId: string; until: number };
        try {
          reserved = await this.reserve(call, tokens, block.heldFor);
        } catch (error) {
          // Not enough for a block: this call (and the next) reserve what they need alone.
          if (error instanceof PlatformError && error.kind === 'ai_balance_insufficient') return null;
          throw error;
        }
        block.reservationId = reserved.reservationId;
        block.until = reserved.until;
        block.remaining = tokens;
      }
      block.remaining -= estimate;
      return { reservationId: block.reservationId, fromBlock: estimate, until: block.until };
    });
    return fromBlock ?? own();
  }

  /** A failed call's hold: its own reservation released; its estimate back into its block. */
  private async letGo(call: MeteredCall, held: Held): Promise<void> {
    if (held.fromBlock === undefined) return this.release(call, held.reservationId);
    const block = call.block!;
    await block.turns.run('block', async () => {
      if (block.reservationId === held.reservationId) block.remaining += held.fromBlock!;
    });
  }

  /**
   * Asks until answered, `call.attempts` at most, all by `deadline` (epoch ms): every attempt is cut there,
   * and a wait (the backoff, or the endpoint's `Retry-After` when longer) that would end past it is not waited:
   * the call fails at once, saying when to try again.
   */
  private async withRetries(model: LanguageModel, call: MeteredCall, deadline: number): Promise<Completion> {
    const timeLeft = () => deadline - this.options.now().getTime();
    const outOfTime = AbortSignal.timeout(Math.max(0, timeLeft()));
    const signal = call.request.signal ? AbortSignal.any([call.request.signal, outOfTime]) : outOfTime;
    const request = { ...call.request, signal };
    for (let attempt = 1; ; attempt++) {
      try {
        return await model.complete(request);
      } catch (error) {
        if (call.request.signal?.aborted) throw error;
        if (outOfTime.aborted)
          throw new LanguageModelError(
            'timeout',
            `no answer within ${this.budgetOf(call)} ms (AI_TIMEOUT_MS), retries included`,
            undefined,
            { cause: error },
          );
        if (!(error instanceof LanguageModelError) || !error.retryable || attempt >= call.attempts)
          throw error;
        const wait = Math.max(this.options.backoffMs(attempt), error.retryAfterMs ?? 0);
        if (wait >= timeLeft()) throw error;
        await this.sleep(wait, signal).catch((reason: unknown) => {
          if (call.request.signal?.aborted) throw reason;
          throw error;
        });
      }
    }
  }

  /** A new reservation of `tokens` (402 when the balance cannot cover them): its id, and when it lapses. */
  private async reserve(
    call: Pick<MeteredCall, 'tenant' | 'context'>,
    tokens: number,
    heldFor?: string,
  ): Promise<{ reservationId: string; until: number }> {
    const reservationId = randomUUID();
    const now = this.options.now();
    await this.balance(call, {
      kind: 'Reserve',
      reservationId,
      tokens,
      now,
      holdMs: this.options.reservationHoldMs,
      ...(heldFor !== undefined && { heldFor }),
    });
    return { reservationId, until: now.getTime() + this.options.reservationHoldMs };
  }

  private async release(call: Pick<MeteredCall, 'tenant' | 'context'>, reservationId: string): Promise<void> {
    await this.balance(call, { kind: 'Release', reservationId, now: this.options.now() });
  }

  /** A balance command (`repeatAfter`: it may have run after that position, see `HandleOptions`). */
  private balance(
    call: Pick<MeteredCall, 'tenant' | 'context'>,
    command: AiBalanceCommand,
    commandId: string = randomUUID(),
    repeatAfter?: bigint,
  ): Promise<CommandResult<AiBalanceState>> {
    return this.balanceTurns.run(call.tenant, () =>
      this.options.handler.handle(
        balanceStream(call.tenant),
        aiBalanceDecider,
        command,
        { ...call.context, commandId },
        repeatAfter === undefined ? {} : { repeatAfter },
      ),
    );
  }
}

function balanceStream(tenant: string): string {
  return streamName('aiBalance', tenant, AI_BALANCE_STREAM_ID);
}

/** Exponential backoff with jitter: about 0.5 s, 1 s, 2 s… at most 20 s. */
export function exponentialBackoff(attempt: number): number {
  const base = Math.min(20_000, 500 * 2 ** (attempt - 1));
  return base / 2 + Math.random() * (base / 2);
}
