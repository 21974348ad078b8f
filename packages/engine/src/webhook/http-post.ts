// One HTTP request of a webhook delivery, with a timeout. It classifies the outcome: 2xx delivered;
// 408, 429, 5xx and network errors or timeouts are worth retrying; other statuses are permanent.
export interface HttpTarget {
  url: string;
  method: "POST" | "PUT";
  headers: Record<string, string>;
  timeoutMs: number;
}

export type HttpOutcome =
  { ok: true; status: number } | { ok: false; status: number | null; error: string; retriable: boolean };

export async function sendRequest(
  target: HttpTarget,
  body: string,
  extraHeaders: Record<string, string>,
): Promise<HttpOutcome> {
  try {
    const res = await fetch(target.url, {
      method: target.method,
      headers: { "content-type": "application/json", ...target.headers, ...extraHeaders },
      body,
      signal: AbortSignal.timeout(target.timeoutMs),
    });
    const text = await res.text().catch(() => "");
    if (res.ok) return { ok: true, status: res.status };
    const retriable = res.status >= 500 || res.status === 408 || res.status === 429;
    return {
      ok: false,
      status: res.status,
      error: `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ""}`,
      retriable,
    };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const what =
      e.name === "TimeoutError"
        ? `no response within ${target.timeoutMs} ms`
        : `${e.message}${e.cause?.code ? ` (${e.cause.code})` : ""}`;
    return { ok: false, status: null, error: what, retriable: true };
  }
}
