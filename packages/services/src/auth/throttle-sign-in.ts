// Sign-in attempts per account. The auth library limits requests per client address; this limits them
// per account, so guessing one person's password from many addresses is slowed down just the same.
// Each attempt takes a slot atomically *before* the password is checked (concurrent guesses cannot
// all slip through), a successful sign-in clears the account's row, and once MAX_ATTEMPTS attempts
// fall in one window every further attempt is refused until the window ends — even with the right
// password, which is the point.
import type { PrismaClient } from "@sluice/db";

export const SIGN_IN_THROTTLE = { maxAttempts: 5, windowSeconds: 15 * 60 } as const;

export type TThrottleDecision =
  { allowed: true } | { allowed: false; retryAfterSeconds: number; retryAt: Date };

export async function consumeSignInAttempt(
  db: PrismaClient,
  email: string,
  limits = SIGN_IN_THROTTLE,
): Promise<TThrottleDecision> {
  const key = email.trim().toLowerCase().slice(0, 320);
  const window = `${limits.windowSeconds} seconds`;
  const [row] = await db.$queryRaw<{ attempts: number; window_started: Date; now: Date }[]>`
    INSERT INTO sign_in_throttles (account_key, attempts, window_started) VALUES (${key}, 1, now())
    ON CONFLICT (account_key) DO UPDATE SET
      attempts = CASE WHEN sign_in_throttles.window_started <= now() - ${window}::interval THEN 1 ELSE sign_in_throttles.attempts + 1 END,
      window_started = CASE WHEN sign_in_throttles.window_started <= now() - ${window}::interval THEN now() ELSE sign_in_throttles.window_started END
    RETURNING attempts, window_started, now() AS now`;
  if (!row || row.attempts <= limits.maxAttempts) return { allowed: true };
  const retryAt = new Date(row.window_started.getTime() + limits.windowSeconds * 1000);
  return {
    allowed: false,
    retryAt,
    retryAfterSeconds: Math.max(1, Math.ceil((retryAt.getTime() - row.now.getTime()) / 1000)),
  };
}

/** After a successful sign-in: the account's earlier failures no longer count. */
export async function clearSignInAttempts(db: PrismaClient, email: string): Promise<void> {
  await db.signInThrottle.deleteMany({ where: { accountKey: email.trim().toLowerCase() } });
}

/** "Try again in 14 minutes (at 09:41 UTC)." — the sentence both limits end their refusal with. */
export function describeRetry(retryAfterSeconds: number, now = new Date()): string {
  const at = new Date(now.getTime() + retryAfterSeconds * 1000).toISOString().slice(11, 16);
  const wait =
    retryAfterSeconds < 90 ? `${retryAfterSeconds} seconds` : `${Math.ceil(retryAfterSeconds / 60)} minutes`;
  return `Try again in ${wait} (at ${at} UTC).`;
}
