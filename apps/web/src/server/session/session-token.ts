// A session is a signed cookie, not a server-side row: `v1.<payload>.<mac>`, where payload is the
// base64url JSON { userId, expiresAt } and mac is HMAC-SHA256(secret, "v1.<payload>"). The user and
// role are still read from Postgres on every request, so the cookie only proves who signed in, when.
import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";

const VERSION = "v1";

export const ZSessionClaimsSchema = z.object({
  userId: z.string().min(1),
  /** Epoch milliseconds after which the cookie is refused, whatever the browser does. */
  expiresAt: z.number().int().positive(),
});
export type TSessionClaims = z.infer<typeof ZSessionClaimsSchema>;

function mac(secret: string, signed: string): Buffer {
  return createHmac("sha256", secret).update(signed).digest();
}

export function signSessionToken(claims: TSessionClaims, secret: string): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
  const signed = `${VERSION}.${payload}`;
  return `${signed}.${mac(secret, signed).toString("base64url")}`;
}

/** The claims of a well-formed, correctly signed, unexpired token; otherwise null. */
export function verifySessionToken(
  token: string | undefined,
  secret: string,
  now = Date.now(),
): TSessionClaims | null {
  if (!token) return null;
  const [version, payload, signature, ...rest] = token.split(".");
  if (version !== VERSION || !payload || !signature || rest.length > 0) return null;
  const expected = mac(secret, `${version}.${payload}`);
  const actual = Buffer.from(signature, "base64url");
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return null;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  const claims = ZSessionClaimsSchema.safeParse(json);
  if (!claims.success || claims.data.expiresAt <= now) return null;
  return claims.data;
}
