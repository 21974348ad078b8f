// A real HTTP receiver on the loopback interface for webhook tests. It records every request (its
// idempotency key, body, arrival time and the status it answered) and *honours* the idempotency key
// the way a well-behaved receiver does: a key's effect is applied once; a repeat is acknowledged
// without applying it again. Tests decide per request what to answer and may act before answering
// (e.g. kill the sender while the request is in flight). Like a careful receiver it checks the
// Standard Webhooks signature with the pipeline's secret (the pipeline is the key's first part).
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { signingSecretFor } from "@sluice/outbound-http";
import { Webhook } from "standardwebhooks";

export interface ReceivedRequest {
  key: string;
  body: Record<string, unknown>;
  at: number;
  status: number;
  /** False for a repeat of a key already applied (acknowledged, not applied). */
  applied: boolean;
  /** The signature verified with the pipeline's secret (derived from SLUICE_SIGNING_KEY). */
  verified: boolean;
}

export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  /**
   * Keys whose effect was applied. Always once per key — the receiver honours the key — so this shows
   * which keys arrived, not whether the sender repeated one: use `successes` for that.
   */
  applied: Map<string, number>;
  /** Requests answered 2xx per key, acknowledged repeats included: 1 per key when the sender never sends a key again after it succeeded. */
  successes(): Map<string, number>;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  header?: string;
  /** The status to answer (default 200). `attempt` counts this key's requests, from 1. Awaited before answering. */
  respond?: (req: {
    key: string;
    attempt: number;
    body: Record<string, unknown>;
  }) => number | Promise<number>;
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let data = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (data += c));
    req.on("end", () => resolve(data));
    req.on("error", reject);
  });

export async function startWebhookReceiver(opts: ReceiverOptions = {}): Promise<WebhookReceiver> {
  const header = (opts.header ?? "Idempotency-Key").toLowerCase();
  const requests: ReceivedRequest[] = [];
  const applied = new Map<string, number>();
  const attempts = new Map<string, number>();
  const server = createServer((req, res) => {
    void (async () => {
      const at = Date.now();
      const key = String(req.headers[header] ?? "");
      const text = await readBody(req);
      const body = JSON.parse(text || "{}") as Record<string, unknown>;
      const verified = verifies(key, text, req.headers);
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      const repeat = applied.has(key);
      const status = repeat ? 200 : await (opts.respond?.({ key, attempt, body }) ?? 200);
      const apply = !repeat && status >= 200 && status < 300 && key !== "";
      if (apply) applied.set(key, (applied.get(key) ?? 0) + 1);
      requests.push({ key, body, at, status, applied: apply, verified });
      res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "receiver says no");
    })().catch(() => res.writeHead(400).end());
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/fraud`,
    requests,
    applied,
    successes: () => {
      const n = new Map<string, number>();
      for (const r of requests) if (r.status >= 200 && r.status < 300) n.set(r.key, (n.get(r.key) ?? 0) + 1);
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function verifies(key: string, body: string, headers: IncomingMessage["headers"]): boolean {
  const signingKey = process.env.SLUICE_SIGNING_KEY;
  if (!signingKey) return false;
  const secret = signingSecretFor(signingKey, { kind: "pipeline", name: key.split(":")[0] ?? "" });
  try {
    new Webhook(secret).verify(body, headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}
