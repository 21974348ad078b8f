// Cross-site request forgery: a state-changing request (anything but GET/HEAD/OPTIONS) must come from
// the console's own pages. Browsers send Origin on every such fetch; a request that carries cookies
// but no trusted Origin (or Referer), or that the browser itself marks cross-site, is refused. The
// auth library applies the same rule to /api/auth; this is it for /api/trpc.

export function crossSiteRefusal(req: Request, trustedOrigins: string[]): string | null {
  if (["GET", "HEAD", "OPTIONS"].includes(req.method)) return null;
  if (req.headers.get("sec-fetch-site") === "cross-site")
    return "Refused a cross-site request: changes can only be made from the Sluice console's own pages.";
  if (!req.headers.has("cookie")) return null;
  const claimed = req.headers.get("origin") ?? originOf(req.headers.get("referer"));
  if (claimed && trustedOrigins.includes(claimed)) return null;
  return claimed
    ? `Refused a request from ${claimed}: changes can only be made from the Sluice console's own pages (${trustedOrigins[0]}). Set SLUICE_PUBLIC_URL or SLUICE_TRUSTED_ORIGINS if the console is reached at another address.`
    : "Refused a request without an Origin header: changes can only be made from the Sluice console's own pages.";
}

function originOf(url: string | null): string | null {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}
