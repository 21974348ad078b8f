// Sessions are rows, so ending one ends it everywhere at once: a copied cookie stops working after
// sign-out and after a password change. Sign-in is limited per account and per address, with a
// message that says when to try again; cross-site requests and bad input are refused with nothing
// changed; every sign-in, failure and sign-out lands in the append-only audit log.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { createAuth } from "./create-auth";
import { DEMO_PASSWORD, startConsoleUnderTest, type TConsoleUnderTest } from "../testing/console-under-test";

let c: TConsoleUnderTest;

beforeAll(async () => {
  c = await startConsoleUnderTest("sessions");
});
afterAll(async () => {
  await c?.close();
});

const me = async (cookie: string | null) => (await c.trpc("query", "auth.me", undefined, cookie)).status;
const auditOf = (action: string) =>
  c.db.auditEvent.findMany({
    where: { action },
    orderBy: { id: "asc" },
    select: { actor: true, outcome: true, reason: true, origin: true, ipAddress: true },
  });

describe("sessions", () => {
  it("a session cookie is HttpOnly, SameSite=Lax and works until sign-out, after which a copy of it is refused", async () => {
    const res = await c.authPost(
      "/sign-in/email",
      { email: "operator@sluice.local", password: DEMO_PASSWORD },
      null,
      { ip: "10.0.0.1" },
    );
    const setCookie = res.headers.getSetCookie().find((v) => v.startsWith("sluice.session_token="))!;
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).not.toMatch(/Secure/i);
    const cookie = setCookie.split(";")[0]!;
    const copy = cookie;
    expect(await me(cookie)).toBe(200);

    expect((await c.authPost("/sign-out", {}, cookie)).status).toBe(200);
    expect(await me(copy)).toBe(401);
    expect(await c.db.session.count({ where: { user: { email: "operator@sluice.local" } } })).toBe(0);
    expect((await auditOf("auth.sign_out")).map((e) => e.actor)).toEqual(["operator@sluice.local"]);
  });

  it("a password change signs out every session of the user, copies included; only the new session works", async () => {
    const a = (await c.signIn("owner@sluice.local", DEMO_PASSWORD, { ip: "10.0.0.2" })).cookie!;
    const b = (await c.signIn("owner@sluice.local", DEMO_PASSWORD, { ip: "10.0.0.2" })).cookie!;
    expect([await me(a), await me(b)]).toEqual([200, 200]);
    const changed = await c.authPost(
      "/change-password",
      { currentPassword: DEMO_PASSWORD, newPassword: "a-brand-new-password" },
      a,
    );
    expect(changed.status).toBe(200);
    const fresh = changed.headers
      .getSetCookie()
      .find((v) => v.startsWith("sluice.session_token="))!
      .split(";")[0]!;
    expect([await me(a), await me(b), await me(fresh)]).toEqual([401, 401, 200]);
    expect((await c.signIn("owner@sluice.local", DEMO_PASSWORD, { ip: "10.0.0.2" })).status).toBe(401);
    expect((await c.signIn("owner@sluice.local", "a-brand-new-password", { ip: "10.0.0.2" })).status).toBe(
      200,
    );
    expect((await auditOf("user.password_change")).map((e) => e.actor)).toEqual(["owner@sluice.local"]);
  });

  it("the sixth quick wrong password for an account from one address is refused, says when to try again, and so is the right one from there", async () => {
    for (let i = 1; i <= 5; i++) {
      expect((await c.signIn("viewer@sluice.local", `wrong-${i}`, { ip: "10.1.0.1" })).status).toBe(401);
    }
    const sixth = await c.signIn("viewer@sluice.local", "wrong-6", { ip: "10.1.0.1" });
    expect(sixth.status).toBe(429);
    expect(sixth.body.message).toMatch(
      /^Too many failed sign-ins for viewer@sluice\.local from your address\. Try again in 15 minutes \(at \d\d:\d\d UTC\)\. /,
    );
    // (Another address, or a browser that signed in before, is not affected: security/lockout.int.test.ts.)
    const right = await c.signIn("viewer@sluice.local", DEMO_PASSWORD, { ip: "10.1.0.1" });
    expect(right).toMatchObject({ status: 429, cookie: null });
    expect(await c.db.session.count({ where: { user: { email: "viewer@sluice.local" } } })).toBe(0);
    const attempts = (await auditOf("auth.sign_in")).filter((e) => e.actor === "viewer@sluice.local");
    expect(attempts.map((e) => e.outcome)).toEqual([
      "refused",
      "refused",
      "refused",
      "refused",
      "refused",
      "refused",
      "refused",
    ]);
    expect(attempts[0]!.ipAddress).toBe("10.1.0.1");
  });

  it("sign-in attempts from one address are limited across accounts, saying when to try again", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++)
      statuses.push((await c.signIn(`nobody-${i}@sluice.local`, "guess", { ip: "10.2.0.1" })).status);
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    const refused = await c.signIn("admin@sluice.local", DEMO_PASSWORD, { ip: "10.2.0.1" });
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(
      /^Too many sign-in attempts from your address\. Try again in \d+ seconds \(at \d\d:\d\d UTC\)\.$/,
    );
    // Another address is not affected.
    expect((await c.signIn("admin@sluice.local", DEMO_PASSWORD, { ip: "10.2.0.2" })).status).toBe(200);
  });

  it("bad sign-in input is refused with a clear message and changes nothing", async () => {
    const before = await c.db.auditEvent.count();
    const notEmail = await c.signIn("not-an-email", "whatever", { ip: "10.3.0.1" });
    expect(notEmail).toMatchObject({
      status: 400,
      cookie: null,
      body: { message: "Enter an email address, e.g. operator@sluice.local" },
    });
    const empty = await c.signIn("admin@sluice.local", "", { ip: "10.3.0.1" });
    expect(empty).toMatchObject({ status: 400, cookie: null, body: { message: "Enter your password" } });
    expect(
      await c.db.signInThrottle.count({
        where: { accountKey: { contains: "admin@sluice.local" }, attempts: { gt: 0 } },
      }),
    ).toBe(0);
    expect(await c.db.auditEvent.count()).toBe(before);
  });

  it("cross-site requests are refused: a tRPC mutation and a sign-out posted from another origin", async () => {
    const cookie = (await c.signIn("admin@sluice.local", DEMO_PASSWORD, { ip: "10.4.0.1" })).cookie!;
    const forged = await c.trpc("mutation", "webhook.requeue", { pipeline: "fraud-alerts" }, cookie, {
      origin: "http://evil.example",
    });
    expect(forged.status).toBe(403);
    expect(forged.message).toContain("Refused a request from http://evil.example");
    const noOrigin = await c.trpc("mutation", "webhook.requeue", { pipeline: "fraud-alerts" }, cookie, {
      origin: null,
    });
    expect(noOrigin.status).toBe(403);
    expect((await c.authPost("/sign-out", {}, cookie, { origin: "http://evil.example" })).status).toBe(403);
    expect(await me(cookie)).toBe(200);
  });

  it("over https the cookie is Secure (with the __Secure- prefix)", async () => {
    const https = createAuth({
      db: c.db,
      secret: "s".repeat(48),
      publicUrl: "https://sluice.example",
      trustedOrigins: ["https://sluice.example"],
      sessionTtlHours: 1,
      sso: null,
      logger: pino({ level: "silent" }),
    });
    const res = await https.handler(
      new Request("https://sluice.example/api/auth/sign-in/email", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          origin: "https://sluice.example",
          "x-forwarded-for": "10.5.0.1",
        },
        body: JSON.stringify({ email: "oncall@sluice.local", password: DEMO_PASSWORD }),
      }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie().find((v) => v.startsWith("__Secure-sluice.session_token="))).toMatch(
      /; Secure/i,
    );
  });
});

describe("the audit log", () => {
  it("is append-only in the database: UPDATE and DELETE are refused", async () => {
    expect(await c.db.auditEvent.count()).toBeGreaterThan(0);
    await expect(c.db.$executeRawUnsafe(`UPDATE audit_events SET actor = 'someone-else'`)).rejects.toThrow(
      /append-only: UPDATE is not allowed/,
    );
    await expect(c.db.$executeRawUnsafe(`DELETE FROM audit_events`)).rejects.toThrow(
      /append-only: DELETE is not allowed/,
    );
    await expect(c.db.$executeRawUnsafe(`TRUNCATE audit_events`)).rejects.toThrow(
      /append-only: TRUNCATE is not allowed/,
    );
    expect(await c.db.auditEvent.count({ where: { actor: "someone-else" } })).toBe(0);
  });
});
