// Sign-in attempts, counted so that guessing a password stays expensive without handing anyone a way
// to lock someone else out (OWASP's "device cookies"). A browser that signed in to an account before
// carries a device cookie for it (auth-hooks.ts issues and checks it): its attempts count against that
// browser only, so nobody else's guesses can lock it out. Every other attempt counts twice — per
// account and client address (one address guessing one account is stopped after a few tries, without
// touching the account's other addresses) and per account across addresses for browsers it never
// signed in with (many addresses guessing one account are stopped too; the real user's own browser
// still gets in). The auth library's per-address limit (across accounts) comes on top.
//
// Each attempt takes its slots atomically *before* the password is checked (concurrent guesses cannot
// all slip through); a refused attempt takes no slot further along (an address that is already
// refused does not use up the account's budget). A successful sign-in clears its address's and its
// browser's counts, and gives back its own slot in the account's.
import { firstRowOf, sql, tables, type PrismaClient } from "@sluice/db";

export interface TThrottleLimit {
  maxAttempts: number;
  windowSeconds: number;
}

export const SIGN_IN_LIMITS = {
  /** One account from one client address, browsers without the account's device cookie. */
  accountAndAddress: { maxAttempts: 5, windowSeconds: 15 * 60 },
  /** One account from every address together, browsers without its device cookie. */
  accountUntrusted: { maxAttempts: 20, windowSeconds: 15 * 60 },
  /** One browser holding the account's device cookie. */
  device: { maxAttempts: 10, windowSeconds: 15 * 60 },
} as const satisfies Record<string, TThrottleLimit>;

export type TThrottleScope = keyof typeof SIGN_IN_LIMITS;

export interface TSignInAttempt {
  email: string;
  /** The client's address (the console's front door settled it); null when unknown. */
  address: string | null;
  /** The id in a valid device cookie issued to this account, or null. */
  deviceId: string | null;
}

export type TThrottleDecision =
  { allowed: true } | { allowed: false; scope: TThrottleScope; retryAfterSeconds: number; retryAt: Date };

const normalEmail = (email: string) => email.trim().toLowerCase().slice(0, 320);

/** The counters an attempt takes a slot in, in order (each row of `sign_in_throttles` is one). */
function keysOf(attempt: TSignInAttempt): { scope: TThrottleScope; key: string }[] {
  const email = normalEmail(attempt.email);
  if (attempt.deviceId) return [{ scope: "device", key: `device:${email}|${attempt.deviceId}` }];
  return [
    { scope: "accountAndAddress", key: `address:${email}|${attempt.address ?? "unknown"}` },
    { scope: "accountUntrusted", key: `account:${email}` },
  ];
}

async function consume(
  db: PrismaClient,
  key: string,
  limit: TThrottleLimit,
): Promise<{ allowed: true } | { allowed: false; retryAfterSeconds: number; retryAt: Date }> {
  const window = `${limit.windowSeconds} seconds`;
  const row = await firstRowOf(
    db,
    tables
      .insertInto("sign_in_throttles")
      .values({ account_key: key, attempts: 1, window_started: sql`now()` })
      .onConflict((oc) =>
        oc.column("account_key").doUpdateSet((eb) => {
          const expired = eb(
            "sign_in_throttles.window_started",
            "<=",
            sql<Date>`now() - ${window}::interval`,
          );
          return {
            attempts: eb
              .case()
              .when(expired)
              .then(eb.lit(1))
              .else(eb("sign_in_throttles.attempts", "+", eb.lit(1)))
              .end(),
            window_started: eb
              .case()
              .when(expired)
              .then(sql<Date>`now()`)
              .else(eb.ref("sign_in_throttles.window_started"))
              .end(),
          };
        }),
      )
      .returning(["attempts", "window_started", sql<Date>`now()`.as("now")]),
  );
  if (!row || row.attempts <= limit.maxAttempts) return { allowed: true };
  const retryAt = new Date(row.window_started.getTime() + limit.windowSeconds * 1000);
  return {
    allowed: false,
    retryAt,
    retryAfterSeconds: Math.max(1, Math.ceil((retryAt.getTime() - row.now.getTime()) / 1000)),
  };
}

export async function consumeSignInAttempt(
  db: PrismaClient,
  attempt: TSignInAttempt,
  limits: Record<TThrottleScope, TThrottleLimit> = SIGN_IN_LIMITS,
): Promise<TThrottleDecision> {
  for (const { scope, key } of keysOf(attempt)) {
    const decision = await consume(db, key, limits[scope]);
    if (!decision.allowed) return { ...decision, scope };
  }
  return { allowed: true };
}

/**
 * After a successful sign-in: the failures from this address and this browser no longer count. The
 * account-wide count of unknown browsers keeps the others' failures (a success somewhere does not
 * excuse guesses elsewhere); it only gives back the slot this success took, so it counts failures.
 */
export async function clearSignInAttempts(db: PrismaClient, attempt: TSignInAttempt): Promise<void> {
  const keys = keysOf(attempt);
  const cleared = keys.filter((k) => k.scope !== "accountUntrusted").map((k) => k.key);
  await db.signInThrottle.deleteMany({ where: { accountKey: { in: cleared } } });
  const account = keys.find((k) => k.scope === "accountUntrusted");
  if (account)
    await db.signInThrottle.updateMany({
      where: { accountKey: account.key, attempts: { gt: 0 } },
      data: { attempts: { decrement: 1 } },
    });
}

/** Why an attempt was refused, and what the person can do: the message of the 429. */
export function describeThrottle(
  email: string,
  decision: Extract<TThrottleDecision, { allowed: false }>,
  now = new Date(),
): string {
  const who = normalEmail(email);
  const retry = describeRetry(decision.retryAfterSeconds, now);
  switch (decision.scope) {
    case "accountAndAddress":
      return `Too many failed sign-ins for ${who} from your address. ${retry} A browser that has signed in to this account before is not affected.`;
    case "accountUntrusted":
      return `Too many failed sign-ins for ${who} from browsers it has not signed in with before. ${retry} A browser that has signed in to this account before is not affected.`;
    case "device":
      return `Too many failed sign-ins for ${who} in this browser. ${retry}`;
  }
}

/** "Try again in 14 minutes (at 09:41 UTC)." — the sentence both limits end their refusal with. */
export function describeRetry(retryAfterSeconds: number, now = new Date()): string {
  const at = new Date(now.getTime() + retryAfterSeconds * 1000).toISOString().slice(11, 16);
  const wait =
    retryAfterSeconds < 90 ? `${retryAfterSeconds} seconds` : `${Math.ceil(retryAfterSeconds / 60)} minutes`;
  return `Try again in ${wait} (at ${at} UTC).`;
}
