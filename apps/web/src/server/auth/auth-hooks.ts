// What Sluice adds around the auth library's own endpoints: clear refusals for bad sign-in input, the
// attempt limits per account (with device cookies, so nobody can lock anyone out; the library limits
// per address), refusing disabled users, applying the
// SSO group mapping at each single sign-on, and the audit log of sign-ins, failures and sign-outs.
import {
  applySsoGrants,
  clearSignInAttempts,
  consumeSignInAttempt,
  describeThrottle,
  groupsFromClaim,
  recordAuditEvent,
  resolveSsoGrants,
  type TAuditOrigin,
} from "@sluice/services";
import { APIError, createAuthMiddleware, getSessionFromCtx, isAPIError } from "better-auth/api";
import { z } from "zod";
import type { TAuthDeps } from "./auth-deps";
import { issueDeviceCookie, readDeviceCookie } from "./device-cookie";
import { requestOrigin } from "./request-origin";
import { SSO_PROVIDER_ID } from "./sso-config";

type TMiddlewareCtx = Parameters<Parameters<typeof createAuthMiddleware>[0]>[0];

export const ZPasswordSignInSchema = z.object({
  email: z.email("Enter an email address, e.g. operator@sluice.local").max(320),
  password: z.string().min(1, "Enter your password").max(1024),
});

const origin = (
  ctx: { request?: Request; headers?: Headers } | null | undefined,
  kind: TAuditOrigin["origin"] = "web",
) => requestOrigin(ctx?.request?.headers ?? ctx?.headers, kind);

async function audit(deps: TAuthDeps, event: Parameters<typeof recordAuditEvent>[1]): Promise<void> {
  // The audit write must not turn a sign-in into a server error; it is logged if it fails.
  await recordAuditEvent(deps.db, event).catch((err: unknown) =>
    deps.logger.error({ err, action: event.action }, "could not record an audit event"),
  );
}

async function userIdFor(deps: TAuthDeps, email: string): Promise<string | null> {
  return (await deps.db.user.findUnique({ where: { email }, select: { id: true } }))?.id ?? null;
}

/** Who is trying: the account, the client's address, and this browser's device cookie for the account. */
async function signInAttempt(deps: TAuthDeps, ctx: TMiddlewareCtx, email: string) {
  return {
    email,
    address: origin(ctx).ipAddress ?? null,
    deviceId: await readDeviceCookie(ctx, deps, email),
  };
}

async function beforePasswordSignIn(deps: TAuthDeps, ctx: TMiddlewareCtx): Promise<void> {
  const input = ZPasswordSignInSchema.safeParse(ctx.body ?? {});
  if (!input.success) {
    throw new APIError("BAD_REQUEST", {
      code: "INVALID_INPUT",
      message: input.error.issues.map((i) => i.message).join("; "),
    });
  }
  const email = input.data.email.trim().toLowerCase();
  const throttle = await consumeSignInAttempt(deps.db, await signInAttempt(deps, ctx, email));
  if (throttle.allowed) return;
  const message = describeThrottle(email, throttle);
  await audit(deps, {
    actorUserId: await userIdFor(deps, email),
    actor: email,
    action: "auth.sign_in",
    outcome: "refused",
    reason: message,
    from: origin(ctx),
  });
  throw new APIError(
    "TOO_MANY_REQUESTS",
    { code: "ACCOUNT_THROTTLED", message, retryAfterSeconds: throttle.retryAfterSeconds },
    { "Retry-After": String(throttle.retryAfterSeconds) },
  );
}

async function afterPasswordSignIn(deps: TAuthDeps, ctx: TMiddlewareCtx): Promise<void> {
  const email = String((ctx.body as { email?: unknown } | undefined)?.email ?? "")
    .trim()
    .toLowerCase()
    .slice(0, 320);
  const signedIn = ctx.context.newSession;
  if (signedIn) {
    await clearSignInAttempts(deps.db, await signInAttempt(deps, ctx, email));
    // From now on this browser is one the account signed in with: others' guesses cannot lock it out.
    await issueDeviceCookie(ctx, deps, signedIn.user.email);
    await audit(deps, {
      actorUserId: signedIn.user.id,
      actor: signedIn.user.email,
      action: "auth.sign_in",
      target: { type: "user", id: signedIn.user.id, label: signedIn.user.email },
      reason: "password",
      from: origin(ctx),
    });
    return;
  }
  const returned = ctx.context.returned;
  if (!isAPIError(returned) || returned.body?.code === "INVALID_INPUT") return;
  await audit(deps, {
    actorUserId: await userIdFor(deps, email),
    actor: email || "(no email)",
    action: "auth.sign_in",
    outcome: "refused",
    reason: returned.body?.message ?? returned.message,
    from: origin(ctx),
  });
}

async function afterSingleSignOn(deps: TAuthDeps, ctx: TMiddlewareCtx): Promise<void> {
  const signedIn = ctx.context.newSession;
  if (signedIn) {
    await audit(deps, {
      actorUserId: signedIn.user.id,
      actor: signedIn.user.email,
      action: "auth.sign_in",
      target: { type: "user", id: signedIn.user.id, label: signedIn.user.email },
      reason: "single sign-on",
      from: origin(ctx, "sso"),
    });
    return;
  }
  // A refused callback is a redirect to the problem page carrying the library's error code.
  const returned = ctx.context.returned;
  const location = isAPIError(returned) ? new Headers(returned.headers).get("location") : null;
  const error = location ? new URL(location, deps.publicUrl).searchParams.get("error") : null;
  if (error && error !== "no_access") {
    await audit(deps, {
      actor: "(single sign-on)",
      action: "auth.sign_in",
      outcome: "refused",
      reason: `single sign-on callback refused: ${error}`,
      from: origin(ctx, "sso"),
    });
  }
}

export function authHooks(deps: TAuthDeps) {
  return {
    before: createAuthMiddleware(async (ctx) => {
      if (ctx.path === "/sign-in/email") return beforePasswordSignIn(deps, ctx);
      // Changing your password signs out every other browser (a copied cookie dies with them).
      if (ctx.path === "/change-password")
        return { context: { body: { ...(ctx.body as object), revokeOtherSessions: true } } };
      if (ctx.path === "/sign-out") {
        const session = await getSessionFromCtx(ctx).catch(() => null);
        if (session) {
          await audit(deps, {
            actorUserId: session.user.id,
            actor: session.user.email,
            action: "auth.sign_out",
            target: { type: "user", id: session.user.id, label: session.user.email },
            from: origin(ctx),
          });
        }
      }
    }),
    after: createAuthMiddleware(async (ctx) => {
      if (ctx.path === "/sign-in/email") return afterPasswordSignIn(deps, ctx);
      if (ctx.path === "/callback/:id") return afterSingleSignOn(deps, ctx);
      if (ctx.path === "/change-password" && ctx.context.newSession) {
        const { user } = ctx.context.newSession;
        await audit(deps, {
          actorUserId: user.id,
          actor: user.email,
          action: "user.password_change",
          target: { type: "user", id: user.id, label: user.email },
          reason: "changed their own password; their other sessions were signed out",
          from: origin(ctx),
        });
      }
    }),
  };
}

/** Before any session is created: a disabled user gets none; a single sign-on applies the group mapping. */
export async function sessionCreateHook(
  deps: TAuthDeps,
  session: { userId: string },
  ctx: { path?: string; request?: Request; headers?: Headers } | null,
): Promise<void> {
  const user = await deps.db.user.findUnique({
    where: { id: session.userId },
    select: { disabledAt: true, ssoGroups: true },
  });
  if (user?.disabledAt) {
    throw new APIError("FORBIDDEN", {
      code: "ACCOUNT_DISABLED",
      message: "This account is disabled. Ask an admin of your Sluice console to enable it.",
    });
  }
  if (user && ctx?.path === "/callback/:id") {
    const grants = await applySsoGrants(deps.db, session.userId, user.ssoGroups, origin(ctx, "sso"));
    if (!grants.role)
      throw new APIError("FORBIDDEN", { code: "no_access", message: noAccessMessage(user.ssoGroups) });
  }
}

function noAccessMessage(groups: string[]): string {
  const yours =
    groups.length > 0
      ? `your groups (${groups.join(", ")})`
      : "your account (the identity provider sent no groups)";
  return `Single sign-on worked, but ${yours} are not mapped to any Sluice role or team. Ask a Sluice admin to map one of your groups on the Admin page.`;
}

/**
 * The library's provisioning gate, before a single sign-on creates or updates a user: a user whose
 * groups map to nothing is refused here, so no account is created for them.
 */
export async function validateSsoUser(
  deps: TAuthDeps,
  data: {
    user: { email?: string | null };
    source: { method: string; oauth?: { providerId: string; profile?: Record<string, unknown> } };
  },
) {
  if (data.source.method !== "oauth" || data.source.oauth?.providerId !== SSO_PROVIDER_ID || !deps.sso)
    return;
  const groups = groupsFromClaim(data.source.oauth.profile?.[deps.sso.groupsClaim]);
  if ((await resolveSsoGrants(deps.db, groups)).role) return;
  const email = String(data.user.email ?? "(no email)").toLowerCase();
  await audit(deps, {
    actorUserId: await userIdFor(deps, email),
    actor: email,
    action: "auth.sign_in",
    outcome: "refused",
    reason: `single sign-on: no access for groups ${groups.join(", ") || "(none)"}`,
    from: { origin: "sso" },
  });
  return { error: "no_access", errorDescription: noAccessMessage(groups) };
}
