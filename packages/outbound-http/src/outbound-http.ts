// The one door every outbound HTTP request of Sluice goes through: the webhook sink (engine) and the
// alert notifications (services). Each request is refused before connecting when its address is not
// allowed (guarded-agent.ts), signed per sender (webhook-signature.ts), bounded in time, never
// follows a redirect (a 3xx is an answer, not a new target), and reads at most MAX_ANSWER_BYTES of
// the receiver's body. The answer says whether retrying can help.
import dns from "node:dns";
import { fetch, type Agent } from "undici";
import { parseAllowlist, type TAllowEntry } from "./address-policy";
import { guardedAgent, OutboundRefusedError } from "./guarded-agent";
import { signatureHeaders, signingKeyProblem, signingSecretFor, type TSender } from "./webhook-signature";

/** How much of a receiver's answer is read; the rest is dropped unread. */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** How much of it an answer keeps (shown to the pipeline's owners and operators). */
export const ANSWER_EXCERPT_CHARS = 300;

export interface TOutboundRequest {
  url: string;
  method?: "POST" | "PUT";
  headers?: Record<string, string>;
  /** The JSON text sent (the same bytes on every attempt). */
  body: string;
  timeoutMs: number;
  /** Signs the request for this sender; `messageId` is the webhook-id (stable across retries). */
  sign: { sender: TSender; messageId: string };
}

export type TOutboundAnswer =
  | { ok: true; status: number; body: string }
  | {
      ok: false;
      status: number | null;
      /** The start of the receiver's body (empty when there was none). */
      body: string;
      /** What went wrong, without the receiver's body: safe to show to anyone. */
      error: string;
      /** 408, 429, 5xx and network errors; never a refused address or a missing signing key. */
      retriable: boolean;
      /** Nothing was sent: the address is not allowed, or there is no signing key. */
      refused: boolean;
      retryAfterMs: number | null;
    };

export interface TOutboundHttp {
  send(req: TOutboundRequest): Promise<TOutboundAnswer>;
  /** The Standard Webhooks secret a receiver verifies this sender with, or why there is none. */
  signingSecret(sender: TSender): { secret: string } | { problem: string };
  close(): Promise<void>;
}

export interface TOutboundOptions {
  /** SLUICE_OUTBOUND_ALLOW: internal receivers allowed despite their address. */
  allow?: string | readonly TAllowEntry[] | undefined;
  /** SLUICE_SIGNING_KEY. */
  signingKey?: string | undefined;
  /** DNS resolution (tests stand in a resolver that answers like a rebinding attacker's). */
  lookup?: typeof dns.lookup;
}

export function createOutboundHttp(opts: TOutboundOptions = {}): TOutboundHttp {
  const allow =
    typeof opts.allow === "string" || opts.allow === undefined ? parseAllowlist(opts.allow) : opts.allow;
  let agent: Agent | undefined;
  const signingSecret = (sender: TSender) => {
    const problem = signingKeyProblem(opts.signingKey);
    return problem ? { problem } : { secret: signingSecretFor(opts.signingKey!, sender) };
  };
  return {
    signingSecret,
    async send(req) {
      const key = signingSecret(req.sign.sender);
      if ("problem" in key) return refusedAnswer(`not sent: ${key.problem}`);
      agent ??= guardedAgent(allow, opts.lookup);
      return sendSigned(agent, req, signatureHeaders(key.secret, req.sign.messageId, req.body));
    },
    async close() {
      await agent?.close();
    },
  };
}

async function sendSigned(
  dispatcher: Agent,
  req: TOutboundRequest,
  signature: Record<string, string>,
): Promise<TOutboundAnswer> {
  try {
    const res = await fetch(req.url, {
      method: req.method ?? "POST",
      headers: { "content-type": "application/json", ...req.headers, ...signature },
      body: req.body,
      redirect: "manual",
      signal: AbortSignal.timeout(req.timeoutMs),
      dispatcher,
    });
    const body = await readExcerpt(res.body);
    if (res.ok) return { ok: true, status: res.status, body };
    const redirect = res.status >= 300 && res.status < 400 ? " (redirects are not followed)" : "";
    return {
      ok: false,
      status: res.status,
      body,
      error: `HTTP ${res.status}${redirect}`,
      retriable: res.status >= 500 || res.status === 408 || res.status === 429,
      refused: false,
      retryAfterMs: retryAfter(res.headers.get("retry-after")),
    };
  } catch (err) {
    const e = err as Error & { cause?: Error & { code?: string } };
    if (e.cause instanceof OutboundRefusedError) return refusedAnswer(`not sent: ${e.cause.message}`);
    const error =
      e.name === "TimeoutError"
        ? `no response within ${req.timeoutMs} ms`
        : `${e.cause?.message ?? e.message}${e.cause?.code ? ` (${e.cause.code})` : ""}`;
    return { ok: false, status: null, body: "", error, retriable: true, refused: false, retryAfterMs: null };
  }
}

const refusedAnswer = (error: string): TOutboundAnswer => ({
  ok: false,
  status: null,
  body: "",
  error,
  retriable: false,
  refused: true,
  retryAfterMs: null,
});

/** The start of the body as text; at most MAX_ANSWER_BYTES are read, the rest is cancelled. */
async function readExcerpt(
  stream: { getReader(): ReadableStreamDefaultReader<Uint8Array> } | null,
): Promise<string> {
  if (!stream) return "";
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < MAX_ANSWER_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A receiver that drops the connection mid-body: keep what arrived.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString("utf8").slice(0, ANSWER_EXCERPT_CHARS);
}

/** Retry-After in seconds or as an HTTP date (RFC 9110), in milliseconds from now. */
function retryAfter(value: string | null): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}
