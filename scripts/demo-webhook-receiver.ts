// The fraud team's end of the demo's fraud-alerts webhook, on the loopback interface only: it logs
// each alert and honours the Idempotency-Key header like a careful receiver — an alert whose key it
// has already applied is acknowledged again but not applied twice (repeats are logged as such).
// Usage: tsx scripts/demo-webhook-receiver.ts [PORT]   (default 4010; POST /hooks/fraud)
import { createServer } from "node:http";

const port = Number(process.argv[2] ?? "4010");
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
