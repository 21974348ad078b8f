// The process's auth instance, built once from the environment. Server-only: it holds the key.
import "server-only";
import { consoleOrigins } from "../web-env";
import { db } from "../db";
import { webEnv } from "../env";
import { logger } from "../logger";
import { createAuth, type TAuth } from "./create-auth";
import { resolveSessionSecret } from "./session-secret";
import { ssoConfigFrom, type TSsoConfig } from "./sso-config";

const holder = globalThis as typeof globalThis & { __sluiceAuth?: TAuth };

export function auth(): TAuth {
  if (holder.__sluiceAuth) return holder.__sluiceAuth;
  const env = webEnv();
  const secret = resolveSessionSecret(env, (file) =>
    logger().info(
      { file },
      "SLUICE_SESSION_SECRET is not set; generated a session key and stored it in a file",
    ),
  );
  holder.__sluiceAuth = createAuth({
    db: db(),
    secret,
    ...consoleOrigins(env),
    sessionTtlHours: env.SLUICE_SESSION_TTL_HOURS,
    signInsPerAddressPerMinute: env.SLUICE_SIGN_INS_PER_ADDRESS_PER_MINUTE,
    sso: ssoConfigFrom(env),
    logger: logger(),
  });
  return holder.__sluiceAuth;
}

/** What the sign-in page shows: single sign-on only when it is configured. */
export function ssoConfig(): TSsoConfig | null {
  return ssoConfigFrom(webEnv());
}
