// The console's environment schema: the shared service settings plus what only the web app needs.
import { ZServiceEnv, ZSmtpEnv, ZWorkerEnv } from "@sluice/config";
import { z } from "zod";
import { parseTrustedProxies } from "./http/client-address";

const SSO_VARS = ["SLUICE_SSO_ISSUER", "SLUICE_SSO_CLIENT_ID", "SLUICE_SSO_CLIENT_SECRET"] as const;

export const ZWebEnv = ZServiceEnv.extend({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  /** The address the console's server (apps/web/server.ts) listens on; 0.0.0.0 or :: for every interface. */
  SLUICE_LISTEN_HOST: z.string().min(1).default("127.0.0.1"),
  /**
   * Reverse proxies in front of the console whose X-Forwarded-For is believed (comma-separated addresses
   * or CIDR ranges). Default none: the client's address is the socket's, whatever headers it sends.
   */
  SLUICE_TRUSTED_PROXIES: z
    .string()
    .default("")
    .superRefine((text, ctx) => {
      try {
        parseTrustedProxies(text);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
      }
    }),
  /** The workers' BullMQ queue: the console queues a started or resumed pipeline's first batch there. */
  WORKER_QUEUE: ZWorkerEnv.shape.WORKER_QUEUE,
  /**
   * The console's address as browsers reach it (scheme, host, port). Sign-in cookies are marked
   * Secure when it is https, cross-site requests are refused against it, and single sign-on
   * redirects back to `<it>/api/auth/callback/sso`. Default: http://127.0.0.1:$PORT.
   */
  SLUICE_PUBLIC_URL: z.url().optional(),
  /** More origins allowed to send requests (comma-separated), e.g. http://localhost:3000. */
  SLUICE_TRUSTED_ORIGINS: z.string().default(""),
  /**
   * Key that signs session cookies and the single sign-on state. Optional: when unset, a random key
   * is generated once and kept in `.data/session-secret` (git-ignored) so restarts keep sessions.
   * Set it explicitly when more than one console instance serves the same users.
   */
  SLUICE_SESSION_SECRET: z
    .string()
    .min(32, "SLUICE_SESSION_SECRET must be at least 32 characters (try `openssl rand -base64 48`)")
    .optional(),
  /** Where the generated session secret is kept; relative to the console's working directory. */
  SLUICE_DATA_DIR: z.string().default(".data"),
  /** How long a sign-in lasts (not extended by use; sign-out, a password change or disabling the user end it earlier). */
  SLUICE_SESSION_TTL_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 30)
    .default(12),
  /** Sign-ins (and password changes) allowed per client address per minute, across accounts. */
  SLUICE_SIGN_INS_PER_ADDRESS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(10),
  /**
   * The console's alert watchdog: how often it checks that some worker is alive (the one alert a worker
   * cannot raise, docs/alerting.md). 0 turns it off (when another console instance runs it).
   */
  SLUICE_ALERT_WATCHDOG_INTERVAL_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  /** Single sign-on (OpenID Connect): the issuer URL (its /.well-known/openid-configuration is read). */
  SLUICE_SSO_ISSUER: z.url().optional(),
  SLUICE_SSO_CLIENT_ID: z.string().min(1).optional(),
  SLUICE_SSO_CLIENT_SECRET: z.string().min(1).optional(),
  /** Which claim carries the user's groups. */
  SLUICE_SSO_GROUPS_CLAIM: z.string().min(1).default("groups"),
  /** Scopes to ask for (space- or comma-separated); add the one your provider needs for groups. */
  SLUICE_SSO_SCOPES: z.string().default("openid email profile groups"),
  /** The sign-in button says "Sign in with <this>". */
  SLUICE_SSO_LABEL: z.string().min(1).max(60).default("single sign-on"),
})
  // Email contact points: the watchdog's notifications and "send test notification" go out from here.
  .extend(ZSmtpEnv.shape)
  .superRefine((env, ctx) => {
    const set = SSO_VARS.filter((k) => env[k]);
    if (set.length > 0 && set.length < SSO_VARS.length) {
      const missing = SSO_VARS.filter((k) => !env[k]);
      ctx.addIssue({
        code: "custom",
        path: [missing[0]!],
        message: `single sign-on needs ${SSO_VARS.join(", ")}; ${set.join(", ")} set but ${missing.join(", ")} missing`,
      });
    }
  });
export type TWebEnv = z.infer<typeof ZWebEnv>;

/** The console's own origin and the others allowed to call it. */
export function consoleOrigins(env: TWebEnv): { publicUrl: string; trustedOrigins: string[] } {
  const publicUrl = (env.SLUICE_PUBLIC_URL ?? `http://127.0.0.1:${env.PORT}`).replace(/\/$/, "");
  const extra = env.SLUICE_TRUSTED_ORIGINS.split(",")
    .map((o) => o.trim().replace(/\/$/, ""))
    .filter(Boolean);
  const own = new URL(publicUrl);
  // Loopback is loopback: a console on 127.0.0.1 is also reached as localhost, and the other way round.
  const alias =
    own.hostname === "127.0.0.1" ? "localhost" : own.hostname === "localhost" ? "127.0.0.1" : null;
  const aliases = alias ? [`${own.protocol}//${alias}${own.port ? `:${own.port}` : ""}`] : [];
  return { publicUrl, trustedOrigins: [...new Set([own.origin, ...aliases, ...extra])] };
}
