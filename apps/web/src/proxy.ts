// Runs before every page (not /api, not static files): the Content-Security-Policy with a fresh nonce
// (http/security-headers.ts; Next.js reads it from the request's header and puts it on the scripts it
// renders), and the optimistic sign-in gate — pages without a session cookie redirect to /sign-in
// before any rendering. The gate only checks that the cookie is there (no database); the console
// layout and every tRPC procedure look the session up and check the role, so it is a convenience, not
// the guard.
import { isNextDev } from "@sluice/config";
import { getSessionCookie } from "better-auth/cookies";
import { NextResponse, type NextRequest } from "next/server";
import { contentSecurityPolicy, newNonce } from "./server/http/security-headers";

export function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  // The front door has settled the scheme: a trusted proxy's X-Forwarded-Proto or the socket's.
  const https = request.nextUrl.protocol === "https:" || request.headers.get("x-forwarded-proto") === "https";
  const csp = contentSecurityPolicy(newNonce(), { https, dev: isNextDev() });
  let response: NextResponse;
  if (
    pathname === "/sign-in" ||
    pathname.startsWith("/sign-in/") ||
    getSessionCookie(request, { cookiePrefix: "sluice" })
  ) {
    const headers = new Headers(request.headers);
    headers.set("Content-Security-Policy", csp);
    response = NextResponse.next({ request: { headers } });
  } else {
    const signIn = new URL("/sign-in", request.url);
    if (pathname !== "/") signIn.searchParams.set("next", `${pathname}${search}`);
    response = NextResponse.redirect(signIn);
  }
  response.headers.set("Content-Security-Policy", csp);
  return response;
}

export const config = {
  // API routes answer for themselves (tRPC with 401/403, health and metrics are public by design).
  matcher: ["/((?!api/|_next/static|_next/image|favicon.ico|robots.txt).*)"],
};
