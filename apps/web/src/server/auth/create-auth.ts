// Sign-in for the console on Better Auth (docs/console.md "Sign-in and sessions" says why this
// library): email + password and, when configured, single sign-on (OIDC); sessions are rows in
// Postgres (table sessions, through the library's Prisma adapter), so signing out, a password change
// or an admin disabling the user ends them at once. No framework imports here: the Next.js route
// and the integration tests build the same instance.
import { groupsFromClaim } from "@sluice/services";
import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { genericOAuth } from "better-auth/plugins/generic-oauth";
import type { TAuthDeps } from "./auth-deps";
import { authHooks, sessionCreateHook, validateSsoUser } from "./auth-hooks";
import { SSO_PROVIDER_ID } from "./sso-config";

/** Per client address, on the sign-in endpoints (the per-account limit is in auth-hooks.ts). */
export const SIGN_IN_RATE_LIMIT = { window: 60, max: 10 } as const;

/** Every library endpoint the console does not use is switched off (no self sign-up, no profile edits). */
const DISABLED_PATHS = [
  "/sign-up/email",
  "/update-user",
  "/delete-user",
  "/change-email",
  "/request-password-reset",
  "/reset-password",
  "/send-verification-email",
  "/verify-email",
  "/link-social",
  "/unlink-account",
  "/list-accounts",
  "/refresh-token",
  "/get-access-token",
  "/account-info",
  "/update-session",
];

export function createAuth(deps: TAuthDeps) {
  const ttlSeconds = Math.round(deps.sessionTtlHours * 3600);
  const https = deps.publicUrl.startsWith("https:");
  const signInLimit = {
    window: SIGN_IN_RATE_LIMIT.window,
    max: deps.signInsPerAddressPerMinute ?? SIGN_IN_RATE_LIMIT.max,
  };
  return betterAuth({
    appName: "Sluice",
    baseURL: deps.publicUrl,
    basePath: "/api/auth",
    secret: deps.secret,
    trustedOrigins: deps.trustedOrigins,
    database: prismaAdapter(deps.db, { provider: "postgresql" }),
    telemetry: { enabled: false },
    logger: {
      level: "warn",
      log: (level, message, ...args) =>
        deps.logger[level]({ component: "better-auth", details: args.map(String) }, message),
    },
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 10, maxPasswordLength: 256 },
    // An absolute lifetime: a session is never extended by use, and never cached in a cookie (every
    // request reads the row, which is what makes revocation immediate).
    session: { expiresIn: ttlSeconds, disableSessionRefresh: true, cookieCache: { enabled: false } },
    user: {
      additionalFields: { ssoGroups: { type: "string[]", required: false, defaultValue: [] } },
      validateUserInfo: (data) => validateSsoUser(deps, data),
    },
    // The configured identity provider is the organisation's own: a user an admin created first
    // (same email) is linked to it on their first single sign-on.
    account: {
      accountLinking: {
        enabled: true,
        trustedProviders: [SSO_PROVIDER_ID],
        requireLocalEmailVerified: false,
      },
    },
    rateLimit: {
      enabled: true,
      storage: "database",
      window: 60,
      max: 200,
      customRules: {
        "/sign-in/email": signInLimit,
        "/sign-in/social": signInLimit,
        "/change-password": signInLimit,
      },
    },
    advanced: {
      cookiePrefix: "sluice",
      useSecureCookies: https,
      defaultCookieAttributes: { httpOnly: true, sameSite: "lax", secure: https },
      // The library turns both off under NODE_ENV=test; the tests prove they are on.
      disableCSRFCheck: false,
      disableOriginCheck: false,
    },
    disabledPaths: DISABLED_PATHS,
    onAPIError: { errorURL: `${deps.publicUrl}/sign-in/problem` },
    hooks: authHooks(deps),
    databaseHooks: {
      session: { create: { before: (session, ctx) => sessionCreateHook(deps, session, ctx) } },
    },
    plugins: deps.sso
      ? [
          genericOAuth({
            config: [
              {
                providerId: SSO_PROVIDER_ID,
                name: deps.sso.label,
                discoveryUrl: `${deps.sso.issuer}/.well-known/openid-configuration`,
                clientId: deps.sso.clientId,
                clientSecret: deps.sso.clientSecret,
                scopes: deps.sso.scopes,
                pkce: true,
                requireIdTokenVerification: true,
                // Name and groups are refreshed from the provider at every sign-in.
                overrideUserInfo: true,
                mapProfileToUser: (profile) => ({
                  ssoGroups: groupsFromClaim(profile[deps.sso!.groupsClaim]),
                }),
              },
            ],
          }),
        ]
      : [],
  });
}

export type TAuth = ReturnType<typeof createAuth>;
