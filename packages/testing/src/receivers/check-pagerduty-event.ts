// What PagerDuty's Events API v2 accepts (POST /v2/enqueue; PagerDuty/api-schema events-v2): a
// 32-character routing_key, event_action trigger | acknowledge | resolve, a dedup_key (required to
// acknowledge or resolve, at most 255 characters), and for a trigger a payload with summary (≤ 1,024),
// source and severity (critical | error | warning | info). Answers as PagerDuty does: 202 with
// { status: "success", message: "Event processed", dedup_key } or 400 "invalid event" with the errors.
export interface TPagerDutyCheck {
  status: number;
  body: { status: string; message: string; dedup_key?: string; errors?: string[] };
  /** The whole event as sent (dedup_key filled in when PagerDuty would generate one). */
  event?: {
    routing_key: string;
    event_action: string;
    dedup_key: string;
    payload?: Record<string, unknown>;
  } & Record<string, unknown>;
}

const SEVERITIES = ["critical", "error", "warning", "info"];

export function checkPagerDutyEvent(raw: string): TPagerDutyCheck {
  let e: Record<string, unknown>;
  try {
    e = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return {
      status: 400,
      body: {
        status: "Unrecognized object",
        message: "Event object format is unrecognized",
        errors: ["JSON parse error"],
      },
    };
  }
  const errors: string[] = [];
  if (typeof e.routing_key !== "string" || e.routing_key.length !== 32)
    errors.push("Length of 'routing_key' is incorrect (should be 32 characters)");
  if (!["trigger", "acknowledge", "resolve"].includes(String(e.event_action)))
    errors.push(
      "'event_action' is invalid (must be one of the following: 'trigger', 'acknowledge' or 'resolve')",
    );
  if (e.dedup_key !== undefined && (typeof e.dedup_key !== "string" || e.dedup_key.length > 255))
    errors.push("'dedup_key' must be a string of at most 255 characters");
  if (e.event_action !== "trigger" && typeof e.dedup_key !== "string") errors.push("'dedup_key' is missing");
  if (e.event_action === "trigger") {
    const p = e.payload as Record<string, unknown> | undefined;
    if (!p || typeof p !== "object") errors.push("'payload' is missing or not an object");
    else {
      if (typeof p.summary !== "string" || p.summary.length === 0 || p.summary.length > 1024)
        errors.push("'payload.summary' is missing or longer than 1024 characters");
      if (typeof p.source !== "string" || p.source.length === 0) errors.push("'payload.source' is missing");
      if (!SEVERITIES.includes(String(p.severity))) errors.push("'payload.severity' is invalid");
      if (p.timestamp !== undefined && Number.isNaN(Date.parse(String(p.timestamp))))
        errors.push("'payload.timestamp' is not an ISO 8601 timestamp");
    }
  }
  if (errors.length > 0)
    return { status: 400, body: { status: "invalid event", message: "Event object is invalid", errors } };
  const dedup = typeof e.dedup_key === "string" ? e.dedup_key : `generated-${Date.now()}`;
  return {
    status: 202,
    body: { status: "success", message: "Event processed", dedup_key: dedup },
    event: {
      ...e,
      routing_key: e.routing_key as string,
      event_action: e.event_action as string,
      dedup_key: dedup,
      ...(e.payload ? { payload: e.payload as Record<string, unknown> } : {}),
    },
  };
}
