import { PlatformError } from './errors';

/**
 * A system's AI token balance as clients see it, computed the same way from the aggregate (command side) and
 * from its read model (query side): reservations past their time hold nothing.
 */
export interface AiBalanceView {
  readonly tokens: number;
  readonly reserved: number;
  readonly available: number;
  readonly toppedUp: number;
  readonly spent: number;
}

export function aiBalanceView(
  totals: { readonly toppedUp: number; readonly spent: number },
  reservations: Iterable<{ readonly tokens: number; readonly expiresAt: number }>,
  now: number,
): AiBalanceView {
  let reserved = 0;
  for (const reservation of reservations) if (reservation.expiresAt > now) reserved += reservation.tokens;
  const tokens = totals.toppedUp - totals.spent;
  return { tokens, reserved, available: tokens - reserved, toppedUp: totals.toppedUp, spent: totals.spent };
}

/** The refusal of work the balance cannot cover (402, `E4021`), before any model is asked. */
export function insufficientBalance(what: string, needed: number, available: number): PlatformError {
  const left = Math.max(available, 0);
  return new PlatformError(
    'ai_balance_insufficient',
    `the AI token balance cannot cover ${what}: it needs up to ${needed} tokens and ${left} are available; an administrator adds tokens with POST /ai/balance/top-up`,
    { needed, available: left },
  );
}
