// Issuing and reading sessions with the process's key and TTL. Server-only: it touches the key.
import "server-only";
import { webEnv } from "../env";
import { logger } from "../logger";
import { resolveSessionSecret } from "./session-secret";
import { clearSessionCookie, serializeSessionCookie } from "./session-cookie";
import { signSessionToken, verifySessionToken, type TSessionClaims } from "./session-token";

let secret: string | undefined;

function sessionSecret(): string {
  secret ??= resolveSessionSecret(webEnv(), (file) =>
    logger().info(
      { file },
      "SLUICE_SESSION_SECRET is not set; generated a session key and stored it in a file",
    ),
  );
  return secret;
}

/** A Set-Cookie header value that signs `userId` in for SLUICE_SESSION_TTL_HOURS. */
export function issueSessionCookie(userId: string, secure: boolean): string {
  const ttlSeconds = webEnv().SLUICE_SESSION_TTL_HOURS * 3600;
  const token = signSessionToken({ userId, expiresAt: Date.now() + ttlSeconds * 1000 }, sessionSecret());
  return serializeSessionCookie(token, { maxAgeSeconds: ttlSeconds, secure });
}

export function endSessionCookie(secure: boolean): string {
  return clearSessionCookie(secure);
}

export function readSessionClaims(token: string | undefined): TSessionClaims | null {
  return verifySessionToken(token, sessionSecret());
}
