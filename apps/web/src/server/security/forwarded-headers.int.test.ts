// Spoofed X-Forwarded-For against the console over HTTP. The probe rotated forwarded addresses over 20
// wrong passwords: all 401, never 429, and the audit log recorded the invented addresses. Forwarded
// headers now count only from a configured proxy (SLUICE_TRUSTED_PROXIES, default none): the same
// front door as production (http/front-door.ts) runs in front of the console here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTrustedProxies } from "../http/client-address";
import { serveOverHttp, type TConsoleOverHttp } from "../testing/console-over-http";
import { CONSOLE_URL, startConsoleUnderTest, type TConsoleUnderTest } from "../testing/console-under-test";

let cut: TConsoleUnderTest;
let direct: TConsoleOverHttp;
let behindProxy: TConsoleOverHttp;

beforeAll(async () => {
  cut = await startConsoleUnderTest("forwarded");
  direct = await serveOverHttp(cut);
  // The tests' own socket is 127.0.0.1: here it plays the reverse proxy.
  behindProxy = await serveOverHttp(cut, { trustedProxies: parseTrustedProxies("127.0.0.1") });
});
afterAll(async () => {
  await direct?.close();
  await behindProxy?.close();
  await cut?.close();
});

function signIn(base: string, email: string, headers: Record<string, string>) {
  return fetch(`${base}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: CONSOLE_URL, ...headers },
    body: JSON.stringify({ email, password: "not-the-password" }),
  });
}

const refusedFrom = async (actor: string) =>
  (
    await cut.db.auditEvent.findMany({
      where: { action: "auth.sign_in", outcome: "refused", actor },
      select: { ipAddress: true },
    })
  ).map((e) => e.ipAddress);

describe("forwarded headers", () => {
  it("spoofed x-forwarded-for: 20 wrong passwords from rotating forwarded addresses are one address, limited after 10, audited as the socket's", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 20; i++) {
      // A different account each time: only the per-address limit can stop this.
      const res = await signIn(direct.url, `spoof-${i}@example.com`, {
        "x-forwarded-for": `203.0.113.${i}`,
        "x-real-ip": `198.51.100.${i}`,
        forwarded: `for=192.0.2.${i}`,
      });
      statuses.push(res.status);
      if (res.status === 429)
        expect(((await res.json()) as { message: string }).message).toMatch(
          /^Too many sign-in attempts from your address\. Try again in \d+ seconds/,
        );
    }
    expect(statuses).toEqual([...Array(10).fill(401), ...Array(10).fill(429)]);
    // Every attempt the auth library answered is audited with the socket's address, never the claimed one.
    for (let i = 1; i <= 10; i++) expect(await refusedFrom(`spoof-${i}@example.com`)).toEqual(["127.0.0.1"]);
  });

  it("behind a trusted proxy the client is the last address it forwarded; hops the client wrote before it do not count", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 11; i++) {
      const res = await signIn(behindProxy.url, `proxied-${i}@example.com`, {
        // The client's invented hop first, then what the proxy saw (the real client), appended by the proxy.
        "x-forwarded-for": `10.9.9.${i}, 203.0.113.77`,
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
    expect(await refusedFrom("proxied-1@example.com")).toEqual(["203.0.113.77"]);
    // Another client behind the same proxy has its own limit.
    const other = await signIn(behindProxy.url, "proxied-other@example.com", {
      "x-forwarded-for": "203.0.113.78",
    });
    expect(other.status).toBe(401);
    expect(await refusedFrom("proxied-other@example.com")).toEqual(["203.0.113.78"]);
  });
});
