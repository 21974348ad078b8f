// The fraud team's end of the demo's fraud-alerts webhook, on the loopback interface only: it logs
// each alert and honours the Idempotency-Key header like a careful receiver — an alert whose key it
// has already applied is acknowledged again but not applied twice (repeats are logged as such). It
// verifies each request's Standard Webhooks signature with the fraud-alerts pipeline's secret and
// refuses (401) what does not verify — what a real receiver does (docs/security.md).
// Usage: tsx scripts/demo-webhook-receiver.ts [PORT]   (default 4010; POST /hooks/fraud; SLUICE_SIGNING_KEY)
import { createServer } from "node:http";
import { signingSecretFor } from "@sluice/outbound-http";
import { Webhook } from "standardwebhooks";

const port = Number(process.argv[2] ?? "4010");
const signingKey = process.env.SLUICE_SIGNING_KEY;
if (!signingKey)
  throw new Error("set SLUICE_SIGNING_KEY (scripts/up.sh does): the receiver verifies signatures with it");
// A real receiver is given this secret (`sluice webhooks signing-secret fraud-alerts`) and keeps it.
const verifier = new Webhook(signingSecretFor(signingKey, { kind: "pipeline", name: "fraud-alerts" }));
const applied = new Set<string>();
let repeats = 0;

createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk: string) => (body += chunk));
  req.on("end", () => {
    const key = String(req.headers["idempotency-key"] ?? "");
    if (req.method !== "POST" || req.url !== "/hooks/fraud" || key === "") {
      res.writeHead(400).end("POST /hooks/fraud with an Idempotency-Key header");
      return;
    }
    try {
      verifier.verify(body, req.headers as Record<string, string>);
    } catch (err) {
      console.log(`${new Date().toISOString()} refused ${key}: ${(err as Error).message}`);
      res.writeHead(401).end("signature does not verify");
      return;
    }
    const repeat = applied.has(key);
    if (repeat) repeats++;
    else applied.add(key);
    const alert = JSON.parse(body) as Record<string, unknown>;
    console.log(
      `${new Date().toISOString()} ${repeat ? "repeat (not applied again)" : "applied"} ${key} ${alert.type} ${alert.amount} ${alert.currency} merchant ${alert.merchant_id} | ${applied.size} applied, ${repeats} repeats`,
    );
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
}).listen(port, "127.0.0.1", () =>
  console.log(`fraud webhook receiver on http://127.0.0.1:${port}/hooks/fraud`),
);
