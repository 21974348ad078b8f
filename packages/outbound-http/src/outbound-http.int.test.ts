// The outbound door against real local HTTP receivers: what is refused never reaches them (counted
// at the socket), what is allowed arrives signed and verifies with the standardwebhooks package.
import dns from "node:dns";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOutboundHttp } from "./outbound-http";

interface TReceiver {
  port: number;
  connections: number;
  requests: { headers: http.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

async function receiver(
  answer: (res: http.ServerResponse) => void = (res) => res.end("ok"),
): Promise<TReceiver> {
  const r = { connections: 0, requests: [] as TReceiver["requests"] };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      r.requests.push({ headers: req.headers, body });
      answer(res);
    });
  });
  server.on("connection", () => r.connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(r, {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

const KEY = "k".repeat(40);
const sign = { sender: { kind: "pipeline" as const, name: "fraud-alerts" }, messageId: "fraud-alerts:evt-1" };
const body = JSON.stringify({ event_id: "evt-1" });

describe("outbound HTTP", () => {
  let hook: TReceiver;
  beforeAll(async () => {
    hook = await receiver();
  });
  afterAll(() => hook.close());

  it("ssrf: a request to a loopback receiver is refused before connecting, saying how to allow it", async () => {
    const out = createOutboundHttp({ signingKey: KEY });
    const before = hook.connections;
    for (const url of [
      `http://127.0.0.1:${hook.port}/`,
      `http://[::ffff:127.0.0.1]:${hook.port}/`,
      `http://localhost:${hook.port}/`,
    ]) {
      const answer = await out.send({ url, body, timeoutMs: 2000, sign });
      expect(answer).toMatchObject({ ok: false, refused: true, retriable: false });
      expect(!answer.ok && answer.error).toMatch(/loopback.*SLUICE_OUTBOUND_ALLOW/);
    }
    expect(hook.connections).toBe(before);
    await out.close();
  });

  it("dns rebinding: a public-looking name that resolves to loopback at send time is refused", async () => {
    const rebinding = ((name: string, options: dns.LookupOptions, cb: (...a: unknown[]) => void) =>
      name === "hooks.example.test"
        ? cb(null, options.all ? [{ address: "127.0.0.1", family: 4 }] : "127.0.0.1", 4)
        : dns.lookup(name, options, cb as never)) as unknown as typeof dns.lookup;
    const out = createOutboundHttp({ signingKey: KEY, lookup: rebinding });
    const before = hook.connections;
    const answer = await out.send({
      url: `http://hooks.example.test:${hook.port}/`,
      body,
      timeoutMs: 2000,
      sign,
    });
    expect(answer).toMatchObject({ ok: false, refused: true });
    expect(!answer.ok && answer.error).toContain("hooks.example.test resolves to 127.0.0.1");
    expect(hook.connections).toBe(before);
    await out.close();
  });

  it("an allowed internal receiver gets the body with Standard Webhooks headers that verify with its secret", async () => {
    const out = createOutboundHttp({ signingKey: KEY, allow: `127.0.0.1:${hook.port}` });
    const answer = await out.send({ url: `http://127.0.0.1:${hook.port}/hook`, body, timeoutMs: 2000, sign });
    expect(answer).toEqual({ ok: true, status: 200, body: "ok" });
    const got = hook.requests.at(-1)!;
    expect(got.body).toBe(body);
    expect(got.headers["webhook-id"]).toBe("fraud-alerts:evt-1");
    const secret = out.signingSecret(sign.sender);
    if (!("secret" in secret)) throw new Error(secret.problem);
    expect(new Webhook(secret.secret).verify(got.body, got.headers as Record<string, string>)).toEqual({
      event_id: "evt-1",
    });
    // Another sender's secret (another pipeline, a team) does not verify it.
    const other = out.signingSecret({ kind: "team", slug: "risk" });
    if (!("secret" in other)) throw new Error(other.problem);
    expect(() => new Webhook(other.secret).verify(got.body, got.headers as Record<string, string>)).toThrow();
    // Nor does a body changed on the way.
    expect(() =>
      new Webhook(secret.secret).verify(`${got.body} `, got.headers as Record<string, string>),
    ).toThrow();
    await out.close();
  });

  it("ssrf: allowing one loopback port does not open the others (Postgres, Redis)", async () => {
    const other = await receiver();
    const out = createOutboundHttp({ signingKey: KEY, allow: `127.0.0.1:${hook.port}` });
    const answer = await out.send({ url: `http://127.0.0.1:${other.port}/`, body, timeoutMs: 2000, sign });
    expect(answer).toMatchObject({ ok: false, refused: true });
    expect(other.connections).toBe(0);
    await Promise.all([out.close(), other.close()]);
  });

  it("ssrf: a redirect is an answer, never followed to where it points", async () => {
    const target = await receiver();
    const redirector = await receiver((res) => {
      res.writeHead(307, { location: `http://127.0.0.1:${target.port}/` });
      res.end();
    });
    const out = createOutboundHttp({ signingKey: KEY, allow: "127.0.0.1" });
    const answer = await out.send({
      url: `http://127.0.0.1:${redirector.port}/`,
      body,
      timeoutMs: 2000,
      sign,
    });
    expect(answer).toMatchObject({
      ok: false,
      status: 307,
      error: "HTTP 307 (redirects are not followed)",
      retriable: false,
    });
    expect(target.connections).toBe(0);
    await Promise.all([out.close(), target.close(), redirector.close()]);
  });

  it("a receiver answering megabytes is read only up to a bound; its error keeps the body apart", async () => {
    const chatty = await receiver((res) => {
      res.writeHead(500);
      res.end("x".repeat(5_000_000));
    });
    const out = createOutboundHttp({ signingKey: KEY, allow: "127.0.0.1" });
    const answer = await out.send({ url: `http://127.0.0.1:${chatty.port}/`, body, timeoutMs: 5000, sign });
    expect(answer).toMatchObject({ ok: false, status: 500, error: "HTTP 500", retriable: true });
    expect(!answer.ok && answer.body).toBe("x".repeat(300));
    await Promise.all([out.close(), chatty.close()]);
  });

  it("without a signing key nothing is sent, and the answer says what to set", async () => {
    const out = createOutboundHttp({ allow: "127.0.0.1" });
    const before = hook.connections;
    const answer = await out.send({ url: `http://127.0.0.1:${hook.port}/`, body, timeoutMs: 2000, sign });
    expect(answer).toMatchObject({ ok: false, refused: true, retriable: false });
    expect(!answer.ok && answer.error).toContain("SLUICE_SIGNING_KEY");
    expect(hook.connections).toBe(before);
  });
});
