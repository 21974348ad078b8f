// The session cookie's name and attributes, in one place for sign-in, sign-out and the proxy.
// HttpOnly (scripts cannot read it), SameSite=Lax (not sent on cross-site POSTs), Secure over HTTPS.

export const SESSION_COOKIE = "sluice_session";

export function serializeSessionCookie(
  value: string,
  options: { maxAgeSeconds: number; secure: boolean },
): string {
  const parts = [
    `${SESSION_COOKIE}=${value}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Lax",
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
  ];
  if (options.secure) parts.push("Secure");
  return parts.join("; ");
}

export function clearSessionCookie(secure: boolean): string {
  return serializeSessionCookie("", { maxAgeSeconds: 0, secure });
}

/** The session cookie's value from a `Cookie:` request header. */
export function readSessionCookie(cookieHeader: string | null): string | undefined {
  for (const pair of (cookieHeader ?? "").split(";")) {
    const eq = pair.indexOf("=");
    if (eq > 0 && pair.slice(0, eq).trim() === SESSION_COOKIE) return pair.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** Mark cookies Secure when the browser reached us over HTTPS, directly or through a TLS proxy. */
export function isHttpsRequest(req: Request): boolean {
  const forwarded = req.headers.get("x-forwarded-proto")?.split(",")[0]?.trim();
  return (forwarded ?? new URL(req.url).protocol.replace(":", "")) === "https";
}
