// Bad input against the console over HTTP: each was a 500 (or a body read whole) in the probe. Each is
// now a clear answer naming the problem, and the console keeps answering: a NUL character in any text,
// a YAML alias bomb and 10,000-deep nesting in a draft, % and _ in the audit filters (literal, not
// wildcards), and a 50 MB body sent without signing in.
import http from "node:http";
import { recordAuditEvent } from "@sluice/services";
import superjson from "superjson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveOverHttp, type TConsoleOverHttp } from "../testing/console-over-http";
import {
  CONSOLE_URL,
  DEMO_PASSWORD,
  startConsoleUnderTest,
  type TConsoleUnderTest,
} from "../testing/console-under-test";

let cut: TConsoleUnderTest;
let server: TConsoleOverHttp;
let admin: string;

beforeAll(async () => {
  cut = await startConsoleUnderTest("bad-input");
  server = await serveOverHttp(cut);
  admin = (await cut.signIn("admin@sluice.local", DEMO_PASSWORD)).cookie!;
});
afterAll(async () => {
  await server?.close();
  await cut?.close();
});

/** A query as the console's own client sends it: POST with the input in the body (drafts are long). */
async function query(path: string, input: unknown) {
  const res = await fetch(`${server.url}/api/trpc/${path}`, {
    method: "POST",
    headers: { cookie: admin, origin: CONSOLE_URL, "content-type": "application/json" },
    body: JSON.stringify(superjson.serialize(input)),
  });
  const json = (await res.json()) as {
    error?: { json?: { message?: string } };
    result?: { data: { json: unknown } };
  };
  return { status: res.status, message: json.error?.json?.message, data: json.result?.data.json };
}

async function mutate(path: string, input: unknown) {
  const res = await fetch(`${server.url}/api/trpc/${path}`, {
    method: "POST",
    headers: { cookie: admin, origin: CONSOLE_URL, "content-type": "application/json" },
    body: JSON.stringify(superjson.serialize(input)),
  });
  const json = (await res.json()) as { error?: { json?: { message?: string } } };
  return { status: res.status, message: json.error?.json?.message };
}

/** The console still answers (a signed-in read). */
const healthy = async () => (await query("auth.me", undefined)).status;

describe("bad input", () => {
  it("nul byte: a NUL character in any text input is a 400 naming where, never a 500", async () => {
    expect(await query("audit.list", { actor: "admin\u0000" })).toMatchObject({
      status: 400,
      message: "actor: contains a NUL character (\\u0000), which is not allowed in any text; remove it",
    });
    expect(
      await mutate("webhook.requeue", { pipeline: "fraud-alerts", reason: "because\u0000" }),
    ).toMatchObject({
      status: 400,
      message: expect.stringMatching(/^reason: contains a NUL character/),
    });
    expect(await query("draft.check", { text: "name: a\u0000b\n" })).toMatchObject({
      status: 400,
      message: expect.stringMatching(/^text: contains a NUL character/),
    });
    // In a key of a nested object too.
    expect(await query("audit.list", { ["act\u0000or"]: "x" })).toMatchObject({ status: 400 });
    expect(await healthy()).toBe(200);
  });

  it("yaml alias bomb in draft.check: refused with a located error, not a 500", async () => {
    const levels = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"];
    for (const [prev, name] of [
      ["a", "b"],
      ["b", "c"],
      ["c", "d"],
      ["d", "e"],
      ["e", "f"],
      ["f", "g"],
      ["g", "h"],
    ])
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(", ")}]`);
    const res = await query("draft.check", { text: levels.join("\n") });
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({
      ok: false,
      errors: [{ line: 2, message: expect.stringMatching(/^YAML aliases expand to too much/) }],
    });
    expect(await healthy()).toBe(200);
  });

  it("10,000-deep nesting in draft.check: refused with where it got too deep", async () => {
    const res = await query("draft.check", {
      text: `{"name": ${"[".repeat(10_000)}${"]".repeat(10_000)}}`,
    });
    expect(res.data).toMatchObject({
      ok: false,
      errors: [{ line: 1, column: 73, message: expect.stringMatching(/nested more than 64 levels deep/) }],
    });
  });

  it("audit filters: % and _ are matched literally, not as wildcards", async () => {
    for (const actor of ["under_score@example.com", "underXscore@example.com", "percent%@example.com"])
      await recordAuditEvent(cut.db, {
        actor,
        action: "auth.sign_in",
        outcome: "refused",
        reason: "test",
        from: { origin: "web" },
      });
    const actors = async (filter: Record<string, string>) =>
      ((await query("audit.list", filter)).data as { events: { actor: string }[] }).events.map(
        (e) => e.actor,
      );
    expect(await actors({ actor: "under_score" })).toEqual(["under_score@example.com"]);
    expect(await actors({ actor: "%" })).toEqual(["percent%@example.com"]);
    expect(await actors({ actor: "_" })).toEqual(["under_score@example.com"]);
    expect(await actors({ action: "%" })).toEqual([]);
  });

  it("a 50 MB unauthenticated body is refused with 413 before it is read whole", async () => {
    const FIFTY_MB = 50 * 1024 * 1024;
    // Declared up front: refused without reading it.
    const declared = await sendUntilAnswered(`${server.url}/api/trpc/draft.check`, FIFTY_MB, {
      declared: true,
    });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toMatchObject({
      error: { message: expect.stringMatching(/^The request body is larger than 1 MiB/) },
    });
    expect(declared.written).toBeLessThan(FIFTY_MB / 2);
    // Streamed without a length, to the tRPC and the sign-in endpoints: the answer comes while the
    // client is still far from done (the server stopped reading), and the console keeps answering.
    for (const path of ["/api/trpc/draft.check", "/api/auth/sign-in/email"]) {
      const { status, written } = await sendUntilAnswered(`${server.url}${path}`, FIFTY_MB, {
        declared: false,
      });
      expect(status, path).toBe(413);
      expect(written, path).toBeLessThan(FIFTY_MB / 2);
    }
    expect(await healthy()).toBe(200);
  });
});

/**
 * POSTs up to `total` bytes in 64 KiB chunks — with a Content-Length of `total`, or chunked without
 * one — and stops sending as soon as an answer arrives.
 */
function sendUntilAnswered(
  url: string,
  total: number,
  opts: { declared: boolean },
): Promise<{ status: number; written: number; body: string }> {
  return new Promise((resolve, reject) => {
    let written = 0;
    let answered = false;
    const req = http.request(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        origin: CONSOLE_URL,
        ...(opts.declared ? { "content-length": String(total) } : { "transfer-encoding": "chunked" }),
      },
    });
    req.on("response", (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, written, body: Buffer.concat(chunks).toString() });
        req.destroy();
      });
    });
    req.on("error", (err) => (answered ? undefined : reject(err)));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      while (!answered && written < total) {
        written += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}
