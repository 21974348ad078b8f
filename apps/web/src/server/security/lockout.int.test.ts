// "Anyone can lock anyone out": six wrong passwords for an email locked it for 15 minutes, the right
// password included. Now a browser that signed in to the account before (its device cookie) is never
// subject to others' guesses, one address guessing one account is stopped without touching the
// account's other addresses, and guessing from many addresses stays expensive: it stops browsers the
// account never used, not the real user's own.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIGN_IN_LIMITS } from "@sluice/services";
import { DEMO_PASSWORD, startConsoleUnderTest, type TConsoleUnderTest } from "../testing/console-under-test";

let c: TConsoleUnderTest;

beforeAll(async () => {
  c = await startConsoleUnderTest("lockout");
});
afterAll(async () => {
  await c?.close();
});

async function wrongPasswords(
  email: string,
  count: number,
  ip: (i: number) => string,
  device?: string | null,
): Promise<{ statuses: number[]; messages: (string | undefined)[] }> {
  const answers = [];
  for (let i = 0; i < count; i++)
    answers.push(await c.signIn(email, `wrong-guess-${i}`, { ip: ip(i), device }));
  return { statuses: answers.map((a) => a.status), messages: answers.map((a) => a.body.message) };
}

describe("lockout", () => {
  it("lockout: after an attacker's 20 wrong passwords the real user signs in — from the browser they used before, and from another address", async () => {
    const user = "operator@sluice.local";
    // The real user's browser signed in once before: it holds the account's device cookie.
    const before = await c.signIn(user, DEMO_PASSWORD, { ip: "10.20.0.1" });
    expect(before.status).toBe(200);
    expect(before.device).toMatch(/^sluice\.device=/);

    const attacker = await wrongPasswords(user, 20, () => "10.66.0.1");
    // The attacker's address is stopped after 5 guesses, and stays stopped (later also by the
    // per-address limit across accounts, 10 a minute).
    expect(attacker.statuses).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);
    expect(attacker.messages[5]).toMatch(
      /^Too many failed sign-ins for operator@sluice\.local from your address\. Try again in 15 minutes \(at \d\d:\d\d UTC\)\. A browser that has signed in to this account before is not affected\.$/,
    );

    // The real user's browser, with the device cookie it got.
    const withDevice = await c.signIn(user, DEMO_PASSWORD, { ip: "10.20.0.1", device: before.device });
    expect(withDevice.status).toBe(200);
    expect(withDevice.cookie).toMatch(/^sluice\.session_token=/);
    // A new browser from another address.
    const elsewhere = await c.signIn(user, DEMO_PASSWORD, { ip: "10.20.0.2" });
    expect(elsewhere.status).toBe(200);
  });

  it("lockout: guessing from many addresses stays expensive — browsers the account never used are stopped, the real user's is not", async () => {
    const user = "owner@sluice.local";
    const before = await c.signIn(user, DEMO_PASSWORD, { ip: "10.21.0.1" });
    expect(before.status).toBe(200);
    const { maxAttempts } = SIGN_IN_LIMITS.accountUntrusted;
    // A botnet: 4 guesses per address (under the per-address limit), as many addresses as it takes.
    const perAddress = SIGN_IN_LIMITS.accountAndAddress.maxAttempts - 1;
    const { statuses } = await wrongPasswords(
      user,
      maxAttempts + 2,
      (i) => `10.77.${Math.floor(i / perAddress)}.1`,
    );
    expect(statuses).toEqual([...Array(maxAttempts).fill(401), 429, 429]);
    // A fresh address with the right password but a browser the account never used: refused, saying why.
    const fresh = await c.signIn(user, DEMO_PASSWORD, { ip: "10.99.0.1" });
    expect(fresh.status).toBe(429);
    expect(fresh.body.message).toMatch(
      /^Too many failed sign-ins for owner@sluice\.local from browsers it has not signed in with before\. Try again in 15 minutes .* A browser that has signed in to this account before is not affected\.$/,
    );
    // The real user's browser gets in.
    expect((await c.signIn(user, DEMO_PASSWORD, { ip: "10.21.0.9", device: before.device })).status).toBe(
      200,
    );
  });

  it("a device cookie counts only for its own account: another account's cookie or an altered one is no cookie", async () => {
    const attackerOwn = await c.signIn("viewer@sluice.local", DEMO_PASSWORD, { ip: "10.30.0.1" });
    expect(attackerOwn.device).toBeTruthy();
    const target = "admin@sluice.local";
    // The attacker's own account's device cookie does not exempt guesses at the admin.
    expect((await wrongPasswords(target, 6, () => "10.30.0.1", attackerOwn.device)).statuses).toEqual([
      ...Array(5).fill(401),
      429,
    ]);
    // Rewriting the cookie's account breaks its signature.
    const [name, value] = attackerOwn.device!.split("=");
    const forged = `${name}=${decodeURIComponent(value!).replace("viewer@", "admin@")}`;
    expect((await c.signIn(target, DEMO_PASSWORD, { ip: "10.30.0.1", device: forged })).status).toBe(429);
  });

  it("a browser's own failures count against that browser: the device cookie is no unlimited pass", async () => {
    const user = "oncall@sluice.local";
    const { device } = await c.signIn(user, DEMO_PASSWORD, { ip: "10.40.0.1" });
    const { maxAttempts } = SIGN_IN_LIMITS.device;
    // Guessing with the stolen cookie from ever new addresses: the browser's own limit stops it.
    const { statuses } = await wrongPasswords(user, maxAttempts + 1, (i) => `10.41.${i}.1`, device);
    expect(statuses).toEqual([...Array(maxAttempts).fill(401), 429]);
    expect((await c.signIn(user, DEMO_PASSWORD, { ip: "10.41.99.1", device })).body.message).toMatch(
      /^Too many failed sign-ins for oncall@sluice\.local in this browser\./,
    );
    // Which never touches the account elsewhere: a new browser signs in.
    expect((await c.signIn(user, DEMO_PASSWORD, { ip: "10.42.0.1" })).status).toBe(200);
  });
});
