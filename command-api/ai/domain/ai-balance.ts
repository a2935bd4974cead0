import type { AiSpendingPurpose } from '../../../contracts/events/ai';
import { aiBalanceView, insufficientBalance, type AiBalanceView } from '../../../contracts/ai-balance';
import type { Decider, DomainEvent } from '../../kit/decider';

/**
 * A system's AI token balance. Administrators add tokens; every model call first reserves its estimate
 * (refused when what is available cannot cover it, before any call is made), then spends what the model
 * reports it used and lets the reservation go. A reservation whose call never settled (its process died)
 * stops holding tokens when it expires.
 */
export interface AiBalanceState {
  readonly toppedUp: number;
  readonly spent: number;
  /** Open reservations: their tokens and when they lapse (epoch ms). */
  readonly reservations: ReadonlyMap<string, Reservation>;
  /** The latest event's time (epoch ms): reservations past it are dropped as events come. */
  readonly latestAt: number;
}

interface Reservation {
  readonly tokens: number;
  readonly expiresAt: number;
  /** The job whose calls it covers (see `ReleaseHeldFor`). */
  readonly heldFor?: string;
}

export type AiBalanceCommand =
  | {
      readonly kind: 'TopUp';
      readonly tokens: number;
      readonly note: string | null;
      readonly userId: string | null;
    }
  | {
      readonly kind: 'Reserve';
      readonly reservationId: string;
      readonly tokens: number;
      readonly now: Date;
      readonly holdMs: number;
      readonly heldFor?: string;
    }
  | {
      readonly kind: 'Spend';
      /** The reservation it settles (null: spending with none, as a settled estimate). */
      readonly reservationId: string | null;
      /** The tokens of the reservation it settles (absent: all of it; a job's block settles a call at a time). */
      readonly settles?: number;
      readonly now: Date;
      readonly promptTokens: number;
      readonly completionTokens: number;
      /** False when the model reported no usage: `promptTokens` and `completionTokens` are the estimate. */
      readonly reported: boolean;
      readonly model: string;
      readonly purpose: AiSpendingPurpose;
    }
  | { readonly kind: 'Release'; readonly reservationId: string; readonly now: Date }
  /** Lets go every reservation still held for a job that ended (its calls, of any process, are over). */
  | { readonly kind: 'ReleaseHeldFor'; readonly heldFor: string; readonly now: Date };

/** The balance as a client sees it, at `now` (reservations past their time hold nothing). */
export function balanceView(state: AiBalanceState, now: Date): AiBalanceView {
  return aiBalanceView(state, state.reservations.values(), now.getTime());
}

function withoutLapsed(
  reservations: ReadonlyMap<string, Reservation>,
  now: number,
): Map<string, Reservation> {
  const kept = new Map<string, Reservation>();
  for (const [id, reservation] of reservations) if (reservation.expiresAt > now) kept.set(id, reservation);
  return kept;
}

/**
 * The most a spending may charge: what its reservation holds for it (its `settles`, or the whole reservation).
 * A reservation that lapsed holds nothing, and its tokens may have been reserved by others since: then the
 * spending takes only what is still available, so the balance never goes below zero nor below what others
 * hold. (A spending with no reservation is charged as it says.)
 */
function spendingLimit(command: Extract<AiBalanceCommand, { kind: 'Spend' }>, state: AiBalanceState): number {
  if (command.reservationId === null) return Number.POSITIVE_INFINITY;
  const now = command.now.getTime();
  const held = state.reservations.get(command.reservationId);
  if (held !== undefined && held.expiresAt > now)
    return Math.min(held.tokens, command.settles ?? held.tokens);
  return Math.max(0, balanceView(state, command.now).available);
}

/** The spending's tokens cut to `limit`, the answer's (completion) tokens first. */
function withinLimit(
  spending: { readonly promptTokens: number; readonly completionTokens: number },
  limit: number,
): { promptTokens: number; completionTokens: number } {
  const promptTokens = Math.min(spending.promptTokens, limit);
  return { promptTokens, completionTokens: Math.min(spending.completionTokens, limit - promptTokens) };
}

export const aiBalanceDecider: Decider<AiBalanceState, AiBalanceCommand, DomainEvent> = {
  initialState: { toppedUp: 0, spent: 0, reservations: new Map(), latestAt: 0 },

  decide(command, state) {
    switch (command.kind) {
      case 'TopUp':
        return [
          {
            type: 'AiTokensToppedUp',
            data: { tokens: command.tokens, note: command.note, userId: command.userId },
          },
        ];
      case 'Reserve': {
        if (state.reservations.has(command.reservationId)) return [];
        const { available } = balanceView(state, command.now);
        if (available < command.tokens) throw insufficientBalance('this call', command.tokens, available);
        return [
          {
            type: 'AiTokensReserved',
            data: {
              reservationId: command.reservationId,
              tokens: command.tokens,
              at: command.now.toISOString(),
              expiresAt: new Date(command.now.getTime() + command.holdMs).toISOString(),
              ...(command.heldFor !== undefined && { heldFor: command.heldFor }),
            },
          },
        ];
      }
      case 'Spend': {
        const { promptTokens, completionTokens } = withinLimit(command, spendingLimit(command, state));
        return [
          {
            type: 'AiTokensSpent',
            data: {
              reservationId: command.reservationId,
              ...(command.settles !== undefined && { settles: command.settles }),
              at: command.now.toISOString(),
              promptTokens,
              completionTokens,
              tokens: promptTokens + completionTokens,
              reported: command.reported,
              model: command.model,
              purpose: command.purpose,
            },
          },
        ];
      }
      case 'ReleaseHeldFor': {
        const at = command.now.toISOString();
        return [...state.reservations]
          .filter(
            ([, reservation]) =>
              reservation.heldFor === command.heldFor && reservation.expiresAt > command.now.getTime(),
          )
          .map(([reservationId]) => ({ type: 'AiReservationReleased', data: { reservationId, at } }));
      }
      case 'Release':
        return state.reservations.has(command.reservationId)
          ? [
              {
                type: 'AiReservationReleased',
                data: { reservationId: command.reservationId, at: command.now.toISOString() },
              },
            ]
          : [];
    }
  },

  evolve(state, event) {
    const data = event.data as {
      tokens?: number;
      settles?: number;
      reservationId?: string | null;
      at?: string;
      expiresAt?: string;
      heldFor?: string;
    };
    const latestAt = data.at === undefined ? state.latestAt : Math.max(state.latestAt, Date.parse(data.at));
    switch (event.type) {
      case 'AiTokensToppedUp':
        return { ...state, toppedUp: state.toppedUp + (data.tokens ?? 0) };
      case 'AiTokensReserved': {
        const reservations = withoutLapsed(state.reservations, latestAt);
        reservations.set(data.reservationId!, {
          tokens: data.tokens!,
          expiresAt: Date.parse(data.expiresAt!),
          ...(data.heldFor !== undefined && { heldFor: data.heldFor }),
        });
        return { ...state, reservations, latestAt };
      }
      case 'AiTokensSpent':
      case 'AiReservationReleased': {
        const reservations = withoutLapsed(state.reservations, latestAt);
        const settled = data.reservationId ? reservations.get(data.reservationId) : undefined;
        if (settled !== undefined) {
          const left = data.settles === undefined ? 0 : settled.tokens - data.settles;
          if (left > 0) reservations.set(data.reservationId!, { ...settled, tokens: left });
          else reservations.delete(data.reservationId!);
        }
        const spent = event.type === 'AiTokensSpent' ? state.spent + (data.tokens ?? 0) : state.spent;
        return { ...state, spent, reservations, latestAt };
      }
      default:
        return state;
    }
  },
};

/** The one balance stream of a system: `aiBalance-<tenant>.tokens`. */
export const AI_BALANCE_STREAM_ID = 'tokens';
