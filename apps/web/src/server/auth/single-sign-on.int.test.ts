// Single sign-on against a real OpenID Connect provider process (oidc-provider): a user's first sign-in
// creates them with the role and team their groups map to; groups that map to nothing get the "no
// access" page and no account; a callback with a forged state is refused with nothing created; a
// changed mapping applies at the next sign-in.
import {
  startOidcProvider,
  TEST_OIDC_CLIENT,
  type TRunningOidcProvider,
  type TTestIdentity,
} from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_URL, startConsoleUnderTest, type TConsoleUnderTest } from "../testing/console-under-test";
import { handleAuthRequest } from "./auth-route";

let idp: TRunningOidcProvider;
let c: TConsoleUnderTest;

beforeAll(async () => {
  idp = await startOidcProvider({ redirectUris: [`${CONSOLE_URL}/api/auth/callback/sso`] });
  c = await startConsoleUnderTest("sso", {
    sso: {
      issuer: idp.issuer,
      clientId: TEST_OIDC_CLIENT.clientId,
      clientSecret: TEST_OIDC_CLIENT.clientSecret,
      groupsClaim: "groups",
      scopes: ["openid", "email", "profile", "groups"],
      label: "Test IdP",
    },
  });
});
afterAll(async () => {
  await c?.close();
  await idp?.stop();
});

/** A browser's cookie jar, one per origin, enough for this redirect dance. */
class Jar {
  private cookies = new Map<string, Map<string, string>>();
  store(url: string, res: Response) {
    const jar = this.cookies.get(new URL(url).origin) ?? new Map<string, string>();
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = pair!.indexOf("=");
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    this.cookies.set(new URL(url).origin, jar);
  }
  header(url: string): string {
    return [...(this.cookies.get(new URL(url).origin) ?? new Map()).entries()]
      .map(([k, v]) => `${k}=${v}`)
      .join("; ");
  }
  get(url: string, name: string) {
    return this.cookies.get(new URL(url).origin)?.get(name);
  }
}

/** Requests to the console go to its handler; requests to the provider go over HTTP. */
async function request(jar: Jar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const cookie = jar.header(url);
  if (cookie) headers.set("cookie", cookie);
  headers.set("x-forwarded-for", "10.7.0.1");
  const res = url.startsWith(CONSOLE_URL)
    ? await handleAuthRequest(c.auth, new Request(url, { ...init, headers }))
    : await fetch(url, { ...init, headers, redirect: "manual" });
  jar.store(url, res);
  return res;
}

/** Sign in through the provider as `who`; returns where the console finally sent the browser. */
async function singleSignOn(who: TTestIdentity): Promise<{ landed: URL; cookie: string | null }> {
  const jar = new Jar();
  const start = await request(jar, `${CONSOLE_URL}/api/auth/sign-in/social`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: CONSOLE_URL },
    body: JSON.stringify({
      provider: "sso",
      callbackURL: "/pipelines",
      errorCallbackURL: "/sign-in/problem",
    }),
  });
  expect(start.status).toBe(200);
  let url = ((await start.json()) as { url: string }).url;
  for (let hop = 0; hop < 12; hop++) {
    if (url.startsWith(`${CONSOLE_URL}/`) && !url.startsWith(`${CONSOLE_URL}/api/`)) {
      const token = jar.get(CONSOLE_URL, "sluice.session_token");
      return { landed: new URL(url), cookie: token ? `sluice.session_token=${token}` : null };
    }
    const login = /\/interaction\/([\w-]+)$/.exec(new URL(url).pathname);
    const res = login
      ? await request(jar, `${url}/login`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: `login=${who}`,
        })
      : await request(jar, url);
    const location = res.headers.get("location");
    if (!location)
      throw new Error(
        `${url} answered ${res.status} without a redirect: ${(await res.text()).slice(0, 300)}`,
      );
    url = new URL(location, url).href;
  }
  throw new Error("too many redirects");
}

const me = async (cookie: string | null) => c.trpc("query", "auth.me", undefined, cookie);

describe("single sign-on", () => {
  it("a first sign-in creates the user with the role and team their groups map to, and lands on the page asked for", async () => {
    const { landed, cookie } = await singleSignOn("alice");
    expect(landed.pathname).toBe("/pipelines");
    const who = (await me(cookie)).json as {
      result: { data: { json: { email: string; role: string; teams: { slug: string }[] } } };
    };
    expect(who.result.data.json).toMatchObject({
      email: "alice@idp.example",
      role: "owner",
      teams: [{ slug: "payments-data" }],
    });
    const user = await c.db.user.findUniqueOrThrow({
      where: { email: "alice@idp.example" },
      include: { memberships: true, accounts: true },
    });
    expect(user.ssoGroups).toEqual(["payments-engineers", "everyone"]);
    expect(user.memberships.map((m) => m.source)).toEqual(["sso"]);
    expect(user.accounts.map((a) => a.providerId)).toEqual(["sso"]);
    const events = await c.db.auditEvent.findMany({
      where: { targetLabel: "alice@idp.example" },
      orderBy: { id: "asc" },
      select: { action: true, origin: true, after: true },
    });
    expect(events.map((e) => [e.action, e.origin])).toEqual([
      ["user.sso_sync", "sso"],
      ["auth.sign_in", "sso"],
    ]);
    expect(events[0]!.after).toEqual({ role: "owner", teams: ["payments-data"] });
  });

  it("a user whose groups map to nothing gets the no-access page, and no account is created", async () => {
    const { landed, cookie } = await singleSignOn("mallory");
    expect(landed.pathname).toBe("/sign-in/problem");
    expect(landed.searchParams.get("error")).toBe("no_access");
    expect(landed.searchParams.get("error_description")).toContain(
      "your groups (contractors) are not mapped to any Sluice role or team",
    );
    expect(cookie).toBeNull();
    expect(await c.db.user.count({ where: { email: "mallory@idp.example" } })).toBe(0);
    expect(await c.db.auditEvent.count({ where: { actor: "mallory@idp.example", outcome: "refused" } })).toBe(
      1,
    );
  });

  it("a callback with a forged state is refused and creates nothing", async () => {
    const users = await c.db.user.count();
    const sessions = await c.db.session.count();
    const res = await handleAuthRequest(
      c.auth,
      new Request(`${CONSOLE_URL}/api/auth/callback/sso?code=forged-code&state=forged-state`, {
        headers: { "x-forwarded-for": "10.7.0.2" },
      }),
    );
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location")!);
    expect(location.pathname).toBe("/sign-in/problem");
    expect(location.searchParams.get("error")).toMatch(/^state/);
    expect(res.headers.getSetCookie().some((v) => v.startsWith("sluice.session_token="))).toBe(false);
    expect([await c.db.user.count(), await c.db.session.count()]).toEqual([users, sessions]);
  });

  it("a changed mapping applies at the next sign-in: the role follows the groups and the team SSO gave is taken back", async () => {
    await c.db.ssoGroupMapping.deleteMany({ where: { group: "payments-engineers" } });
    await c.db.ssoGroupMapping.create({ data: { group: "everyone", role: "viewer" } });
    const { landed, cookie } = await singleSignOn("alice");
    expect(landed.pathname).toBe("/pipelines");
    const who = (await me(cookie)).json as { result: { data: { json: { role: string; teams: unknown[] } } } };
    expect(who.result.data.json).toMatchObject({ role: "viewer", teams: [] });
    const sync = await c.db.auditEvent.findFirstOrThrow({
      where: { action: "user.sso_sync", targetLabel: "alice@idp.example" },
      orderBy: { id: "desc" },
      select: { before: true, after: true },
    });
    expect(sync).toEqual({
      before: { role: "owner", teams: ["payments-data"] },
      after: { role: "viewer", teams: [] },
    });
  });
});
