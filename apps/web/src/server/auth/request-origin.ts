// Where a request came from, for the audit log: the client address (as the auth library sees it:
// the first X-Forwarded-For hop, which Next.js sets to the socket's address when no proxy did) and
// the user agent.
import type { TAuditOrigin } from "@sluice/services";

export function requestOrigin(
  headers: Headers | undefined,
  origin: TAuditOrigin["origin"] = "web",
): TAuditOrigin {
  const forwarded = headers?.get("x-forwarded-for")?.split(",")[0]?.trim();
  return {
    origin,
    ipAddress: forwarded || headers?.get("x-real-ip") || null,
    userAgent: headers?.get("user-agent")?.slice(0, 1000) ?? null,
  };
}
