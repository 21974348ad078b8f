// What Slack's incoming webhooks accept (https://api.slack.com/messaging/webhooks, Block Kit limits),
// checked the way Slack answers: 200 "ok", or 400 with Slack's error word (invalid_payload, no_text,
// invalid_blocks). A receiver that checks the shape is what makes a Slack-format test mean something.
export type TCheckAnswer = { ok: true } | { ok: false; status: number; body: string };

const BLOCK_TYPES = new Set(["header", "section", "context", "divider", "actions", "image", "rich_text"]);

export function checkSlackMessage(raw: string): TCheckAnswer {
  let msg: unknown;
  try {
    msg = JSON.parse(raw);
  } catch {
    return { ok: false, status: 400, body: "invalid_payload" };
  }
  if (typeof msg !== "object" || msg === null) return { ok: false, status: 400, body: "invalid_payload" };
  const m = msg as { text?: unknown; blocks?: unknown };
  if (m.text !== undefined && typeof m.text !== "string")
    return { ok: false, status: 400, body: "invalid_payload" };
  if (!m.text && m.blocks === undefined) return { ok: false, status: 400, body: "no_text" };
  if (m.blocks === undefined) return { ok: true };
  if (!Array.isArray(m.blocks) || m.blocks.length > 50)
    return { ok: false, status: 400, body: "invalid_blocks" };
  for (const b of m.blocks as Record<string, unknown>[]) {
    if (!BLOCK_TYPES.has(String(b?.type))) return { ok: false, status: 400, body: "invalid_blocks" };
    const text = b.text as { type?: string; text?: unknown } | undefined;
    if (
      b.type === "header" &&
      (text?.type !== "plain_text" || typeof text.text !== "string" || text.text.length > 150)
    )
      return { ok: false, status: 400, body: "invalid_blocks" };
    if (b.type === "section") {
      if (
        text &&
        (typeof text.text !== "string" ||
          text.text.length > 3000 ||
          !["mrkdwn", "plain_text"].includes(String(text.type)))
      )
        return { ok: false, status: 400, body: "invalid_blocks" };
      const fields = b.fields as { text?: unknown }[] | undefined;
      if (
        fields &&
        (fields.length > 10 || fields.some((f) => typeof f.text !== "string" || f.text.length > 2000))
      )
        return { ok: false, status: 400, body: "invalid_blocks" };
    }
    if (
      b.type === "context" &&
      (!Array.isArray(b.elements) || b.elements.length === 0 || b.elements.length > 10)
    )
      return { ok: false, status: 400, body: "invalid_blocks" };
  }
  return { ok: true };
}
