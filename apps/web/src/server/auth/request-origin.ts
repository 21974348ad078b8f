// Where a request came from, for the audit log: the client address and the user agent. The address is
// X-Forwarded-For, which the console's front door (http/front-door.ts) has already reduced to the one
// address it believes — the socket's, or what a trusted proxy forwarded — the same one the auth
// library's per-address limit reads.
import type { TAuditOrigin } from "@sluice/services";

export function requestOrigin(
  headers: Headers | undefined,
  origin: TAuditOrigin["origin"] = "web",
): TAuditOrigin {
  const forwarded = headers?.get("x-forwarded-for")?.split(",")[0]?.trim();
  return {
    origin,
    ipAddress: forwarded || null,
    userAgent: headers?.get("user-agent")?.slice(0, 1000) ?? null,
  };
}
