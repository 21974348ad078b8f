// Optimistic sign-in gate: pages without a session cookie redirect to /sign-in before any rendering.
// It only checks that the cookie is there (no database); the console layout and every tRPC procedure
// look the session up and check the role, so this is a convenience, not the guard.
import { getSessionCookie } from "better-auth/cookies";
import { NextResponse, type NextRequest } from "next/server";

export function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  if (pathname === "/sign-in" || pathname.startsWith("/sign-in/")) return NextResponse.next();
  if (getSessionCookie(request, { cookiePrefix: "sluice" })) return NextResponse.next();
  const signIn = new URL("/sign-in", request.url);
  if (pathname !== "/") signIn.searchParams.set("next", `${pathname}${search}`);
  return NextResponse.redirect(signIn);
}

export const config = {
  // API routes answer for themselves (tRPC with 401/403, health and metrics are public by design).
  matcher: ["/((?!api/|_next/static|_next/image|favicon.ico|robots.txt).*)"],
};
