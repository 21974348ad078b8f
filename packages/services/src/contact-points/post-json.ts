// The one door contact points use to reach an HTTP receiver (webhook, Slack, PagerDuty): a JSON POST
// with a timeout, answering with the status, the start of the body and Retry-After. Every outbound
// request of alerting goes through here, so address filtering and request signing are added in one
// place when the shared outbound-HTTP module lands.
const TIMEOUT_MS = 5_000;

export type THttpAnswer =
  | { ok: true; status: number; body: string }
  | { ok: false; status: number | null; body: string; error: string; retryAfterMs: number | null };

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<THttpAnswer> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
      redirect: "manual",
    });
    const text = (await res.text().catch(() => "")).slice(0, 300);
    if (res.ok) return { ok: true, status: res.status, body: text };
    return {
      ok: false,
      status: res.status,
      body: text,
      // The status only: the body (which can say anything) travels apart, for those who may see it.
      error: `HTTP ${res.status}`,
      retryAfterMs: retryAfter(res.headers.get("retry-after")),
    };
  } catch (err) {
    const cause =
      err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
    return { ok: false, status: null, body: "", error: `request failed: ${cause}`, retryAfterMs: null };
  }
}

/** Retry-After in seconds or as an HTTP date (RFC 9110), in milliseconds from now. */
function retryAfter(value: string | null): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}
