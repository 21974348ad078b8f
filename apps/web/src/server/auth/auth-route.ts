// The auth library's endpoints at /api/auth/*. The body is read within its limit first (a 50 MB body
// is refused, not read whole to answer 401), and one change to its answers: its per-address limit
// says only "Too many requests"; ours says what was limited and when to try again.
import { describeRetry } from "@sluice/services";
import { BODY_LIMITS, TOO_LARGE_HEADERS, withBodyLimit } from "../http/body-limit";
import type { TAuth } from "./create-auth";

export async function handleAuthRequest(auth: TAuth, received: Request): Promise<Response> {
  const body = await withBodyLimit(received, BODY_LIMITS.auth);
  if (!body.ok)
    return Response.json(
      { code: "PAYLOAD_TOO_LARGE", message: body.message },
      { status: 413, headers: TOO_LARGE_HEADERS },
    );
  const res = await auth.handler(body.request);
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
