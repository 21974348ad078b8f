// Optimistic sign-in gate: pages without a valid session cookie redirect to /sign-in before any
// rendering. It checks the signature and expiry only (no database); the console layout and every
// tRPC procedure still load the user and check the role, so this is a convenience, not the guard.
import { NextResponse, type NextRequest } from "next/server";
import { readSessionClaims } from "@/server/session/session";
import { SESSION_COOKIE } from "@/server/session/session-cookie";

export function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  if (pathname === "/sign-in") return NextResponse.next();
  if (readSessionClaims(request.cookies.get(SESSION_COOKIE)?.value)) return NextResponse.next();
  const signIn = new URL("/sign-in", request.url);
  if (pathname !== "/") signIn.searchParams.set("next", `${pathname}${search}`);
  return NextResponse.redirect(signIn);
}

export const config = {
  // API routes answer for themselves (tRPC with 401/403, health and metrics are public by design).
  matcher: ["/((?!api/|_next/static|_next/image|favicon.ico|robots.txt).*)"],
};
