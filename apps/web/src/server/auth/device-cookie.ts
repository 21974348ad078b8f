// OWASP's device cookie: after a successful password sign-in the browser gets a cookie naming the
// account, signed with the console's key (HMAC, the auth library's signed cookies). When that browser
// tries the account again, its attempts count against the browser alone (throttle-sign-in.ts), so an
// attacker's guesses from elsewhere never lock the real user out of a browser they have used before.
// The cookie proves nothing else: it is not a session and grants no access; a cookie for another
// account, a forged or altered one counts as no cookie.
import { randomBytes } from "node:crypto";
import type { createAuthMiddleware } from "better-auth/api";
import type { TAuthDeps } from "./auth-deps";

type TMiddlewareCtx = Parameters<Parameters<typeof createAuthMiddleware>[0]>[0];

export const DEVICE_COOKIE = "sluice.device";
const ONE_YEAR_SECONDS = 365 * 24 * 3600;

/** The device id in this browser's device cookie when it was issued to `email`, else null. */
export async function readDeviceCookie(
  ctx: TMiddlewareCtx,
  deps: Pick<TAuthDeps, "secret">,
  email: string,
): Promise<string | null> {
  const value = await ctx.getSignedCookie(DEVICE_COOKIE, deps.secret).catch(() => null);
  if (typeof value !== "string") return null;
  const sep = value.lastIndexOf("|");
  const [account, deviceId] = [value.slice(0, sep), value.slice(sep + 1)];
  return sep > 0 && account === email.trim().toLowerCase() && /^[A-Za-z0-9_-]{16,64}$/.test(deviceId)
    ? deviceId
    : null;
}

/** Marks this browser as one `email` signed in with (replacing the cookie of another account, if any). */
export async function issueDeviceCookie(
  ctx: TMiddlewareCtx,
  deps: Pick<TAuthDeps, "secret" | "publicUrl">,
  email: string,
): Promise<void> {
  const deviceId = randomBytes(18).toString("base64url");
  await ctx.setSignedCookie(DEVICE_COOKIE, `${email.trim().toLowerCase()}|${deviceId}`, deps.secret, {
    httpOnly: true,
    sameSite: "lax",
    secure: deps.publicUrl.startsWith("https:"),
    // Only the sign-in endpoint needs it.
    path: "/api/auth",
    maxAge: ONE_YEAR_SECONDS,
  });
}
