// The quick start's receivers, on the loopback interface only:
// - the demo on-call receiver (@sluice/testing startOnCallReceiver): the demo teams' contact points page
//   it — Slack messages, PagerDuty events, email over SMTP — and http://127.0.0.1:4010/ shows what was
//   paged (newest first, PagerDuty incidents with their state); each page is logged here too;
// - the fraud team's end of the demo's fraud-alerts webhook (POST /hooks/fraud): it logs each alert and
//   honours the Idempotency-Key header like a careful receiver — an alert whose key it has already
//   applied is acknowledged again but not applied twice (repeats are logged as such). It verifies each
//   request's Standard Webhooks signature with the fraud-alerts pipeline's secret and refuses (401) what
//   does not verify — what a real receiver does (docs/security.md).
// Usage: tsx scripts/demo-receivers.ts [HTTP_PORT] [SMTP_PORT]   (default 4010 and 4025; SLUICE_SIGNING_KEY)
import { signingSecretFor } from "@sluice/outbound-http";
import { startOnCallReceiver } from "@sluice/testing";
import { Webhook } from "standardwebhooks";

const httpPort = Number(process.argv[2] ?? "4010");
const smtpPort = Number(process.argv[3] ?? "4025");
const signingKey = process.env.SLUICE_SIGNING_KEY;
if (!signingKey)
  throw new Error(
    "set SLUICE_SIGNING_KEY (scripts/up.sh does): the fraud receiver verifies signatures with it",
  );
// A real receiver is given this secret (`sluice signing-secret fraud-alerts`) and keeps it.
const verifier = new Webhook(signingSecretFor(signingKey, { kind: "pipeline", name: "fraud-alerts" }));
const applied = new Set<string>();
let repeats = 0;

const receiver = await startOnCallReceiver({
  httpPort,
  smtpPort,
  otherRoutes(req, body, res) {
    if (req.url !== "/hooks/fraud") return false;
    const key = String(req.headers["idempotency-key"] ?? "");
    if (req.method !== "POST" || key === "") {
      res.writeHead(400).end("POST /hooks/fraud with an Idempotency-Key header");
      return true;
    }
    try {
      verifier.verify(body, req.headers as Record<string, string>);
    } catch (err) {
      console.log(`${new Date().toISOString()} fraud webhook refused ${key}: ${(err as Error).message}`);
      res.writeHead(401).end("signature does not verify");
      return true;
    }
    const repeat = applied.has(key);
    if (repeat) repeats++;
    else applied.add(key);
    const alert = JSON.parse(body) as Record<string, unknown>;
    console.log(
      `${new Date().toISOString()} fraud webhook ${repeat ? "repeat (not applied again)" : "applied"} ${key} ${alert.type} ${alert.amount} ${alert.currency} merchant ${alert.merchant_id} | ${applied.size} applied, ${repeats} repeats`,
    );
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    return true;
  },
});

// Log each page as it arrives (the page at / shows them too).
let logged = 0;
setInterval(() => {
  for (const p of receiver.pages.slice(logged))
    console.log(`${p.at} PAGED ${p.channel} to ${p.to}: ${p.action} ${p.key} — ${p.summary}`);
  logged = receiver.pages.length;
}, 500).unref();

console.log(`on-call receiver: what was paged at ${receiver.httpUrl}/ ; email (SMTP) at ${receiver.smtpUrl}`);
console.log(`fraud webhook receiver on ${receiver.httpUrl}/hooks/fraud`);
const stop = () => void receiver.close().finally(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
