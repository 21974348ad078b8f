// The auth library's endpoints at /api/auth/*. One change to its answers: its per-address limit says
// only "Too many requests"; ours says what was limited and when to try again.
import { describeRetry } from "@sluice/services";
import type { TAuth } from "./create-auth";

export async function handleAuthRequest(auth: TAuth, req: Request): Promise<Response> {
  const res = await auth.handler(req);
  if (res.status !== 429 || !res.headers.get("x-retry-after")) return res;
  const retryAfterSeconds = Number(res.headers.get("x-retry-after")) || 60;
  const message = `Too many sign-in attempts from your address. ${describeRetry(retryAfterSeconds)}`;
  return Response.json(
    { code: "RATE_LIMITED", message, retryAfterSeconds },
    { status: 429, headers: { "Retry-After": String(retryAfterSeconds) } },
  );
}

export function authRoute(auth: () => TAuth) {
  const handler = (req: Request) => handleAuthRequest(auth(), req);
  return { GET: handler, POST: handler };
}
