// The Admin page's procedures doing their job: disabling a user ends their sessions at once (a copied
// cookie included) and stops them signing in; a reset password does the same; bad input is refused
// with a message naming the fix and changes nothing; the on-call webhook URL is write-only; every
// change is in the audit log with who, what and the state before and after.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEMO_PASSWORD,
  startConsoleUnderTest,
  type TConsoleUnderTest,
} from "../../testing/console-under-test";

let c: TConsoleUnderTest;
let admin: string;

beforeAll(async () => {
  c = await startConsoleUnderTest("admin_router");
  admin = (await c.signIn("admin@sluice.local", DEMO_PASSWORD, { ip: "10.8.0.1" })).cookie!;
});
afterAll(async () => {
  await c?.close();
});

const me = async (cookie: string | null) => (await c.trpc("query", "auth.me", undefined, cookie)).status;
const userId = async (email: string) => (await c.db.user.findUniqueOrThrow({ where: { email } })).id;

describe("admin procedures", () => {
  it("disabling a user ends every session of theirs at once and refuses their next sign-in; enabling lets them back", async () => {
    const viewer = (await c.signIn("viewer@sluice.local", DEMO_PASSWORD, { ip: "10.8.0.2" })).cookie!;
    const copy = viewer;
    expect(await me(viewer)).toBe(200);
    const disabled = await c.trpc(
      "mutation",
      "admin.setDisabled",
      { userId: await userId("viewer@sluice.local"), disabled: true, reason: "left the company" },
      admin,
    );
    expect(disabled).toMatchObject({ status: 200 });
    expect(await me(copy)).toBe(401);
    const again = await c.signIn("viewer@sluice.local", DEMO_PASSWORD, { ip: "10.8.0.2" });
    expect(again).toMatchObject({
      status: 403,
      cookie: null,
      body: { message: "This account is disabled. Ask an admin of your Sluice console to enable it." },
    });
    await c.trpc(
      "mutation",
      "admin.setDisabled",
      { userId: await userId("viewer@sluice.local"), disabled: false },
      admin,
    );
    expect((await c.signIn("viewer@sluice.local", DEMO_PASSWORD, { ip: "10.8.0.2" })).status).toBe(200);
    const events = await c.db.auditEvent.findMany({
      where: { action: { in: ["user.disable", "user.enable"] } },
      orderBy: { id: "asc" },
    });
    expect(events.map((e) => [e.action, e.actor, e.targetLabel, e.before, e.after])).toEqual([
      ["user.disable", "admin@sluice.local", "viewer@sluice.local", { disabled: false }, { disabled: true }],
      ["user.enable", "admin@sluice.local", "viewer@sluice.local", { disabled: true }, { disabled: false }],
    ]);
    expect(events[0]!.reason).toBe("left the company; 1 session(s) ended");
  });

  it("an admin creates a user with a one-time password, who signs in with it; a reset password ends their sessions", async () => {
    const created = await c.trpc(
      "mutation",
      "admin.createUser",
      {
        email: "Nia@Sluice.local",
        name: "Nia New",
        role: "owner",
        teamIds: [(await c.db.team.findUniqueOrThrow({ where: { slug: "risk" } })).id],
      },
      admin,
    );
    expect(created.status).toBe(200);
    const { oneTimePassword } = (created.json as { result: { data: { json: { oneTimePassword: string } } } })
      .result.data.json;
    expect(oneTimePassword).toMatch(/^[A-Za-z0-9]{16}$/);
    const nia = (await c.signIn("nia@sluice.local", oneTimePassword, { ip: "10.8.0.3" })).cookie!;
    expect(await me(nia)).toBe(200);
    const reset = await c.trpc(
      "mutation",
      "admin.resetPassword",
      { userId: await userId("nia@sluice.local"), password: "another-long-password" },
      admin,
    );
    expect(reset.status).toBe(200);
    expect(await me(nia)).toBe(401);
    expect((await c.signIn("nia@sluice.local", "another-long-password", { ip: "10.8.0.3" })).status).toBe(
      200,
    );
    expect(
      JSON.stringify(
        await c.db.auditEvent.findMany({
          where: { targetLabel: "nia@sluice.local" },
          select: { reason: true, before: true, after: true },
        }),
      ),
    ).not.toContain("another-long-password");
  });

  it("bad input is refused with a message that names the fix, and nothing changes", async () => {
    const users = await c.db.user.count();
    const notEmail = await c.trpc(
      "mutation",
      "admin.createUser",
      { email: "not-an-email", name: "X", role: "viewer" },
      admin,
    );
    expect(notEmail).toMatchObject({
      status: 400,
      message: "email: Enter an email address, e.g. ada@example.com",
    });
    const badRole = await c.trpc(
      "mutation",
      "admin.createUser",
      { email: "x@sluice.local", name: "X", role: "superuser" },
      admin,
    );
    expect(badRole).toMatchObject({
      status: 400,
      message: "role: Choose a role: viewer, operator, owner, admin",
    });
    const emptyPassword = await c.trpc(
      "mutation",
      "admin.resetPassword",
      { userId: await userId("owner@sluice.local"), password: "" },
      admin,
    );
    expect(emptyPassword.status).toBe(400);
    expect(emptyPassword.message).toContain("A password has at least 10 characters");
    const badRoleChange = await c.trpc(
      "mutation",
      "admin.setRole",
      { userId: await userId("owner@sluice.local"), role: "root" },
      admin,
    );
    expect(badRoleChange.status).toBe(400);
    expect(await c.db.user.count()).toBe(users);
    expect((await c.db.user.findUniqueOrThrow({ where: { email: "owner@sluice.local" } })).role).toBe(
      "owner",
    );
    expect((await c.signIn("owner@sluice.local", DEMO_PASSWORD, { ip: "10.8.0.4" })).status).toBe(200);
  });

  it("the last enabled admin can be neither demoted nor disabled", async () => {
    const demote = await c.trpc(
      "mutation",
      "admin.setRole",
      { userId: await userId("admin@sluice.local"), role: "viewer" },
      admin,
    );
    expect(demote).toMatchObject({ status: 409, message: expect.stringContaining("the only enabled admin") });
    const self = await c.trpc(
      "mutation",
      "admin.setDisabled",
      { userId: await userId("admin@sluice.local"), disabled: true },
      admin,
    );
    expect(self).toMatchObject({ status: 409, message: "You cannot disable yourself; ask another admin." });
  });

  it("a contact point's secret URL is stored but never returned: the API says only that it is set, and its host", async () => {
    const risk = await c.db.team.findUniqueOrThrow({ where: { slug: "risk" } });
    const secretUrl = "https://hooks.example.com/services/T000/B000/very-secret-token";
    const set = await c.trpc(
      "mutation",
      "admin.createContactPoint",
      {
        teamId: risk.id,
        contactPoint: { name: "#risk-oncall", kind: "slack", secret: { from: "value", value: secretUrl } },
      },
      admin,
    );
    expect(set.status).toBe(200);
    const email = await c.trpc(
      "mutation",
      "admin.setOnCall",
      { teamId: risk.id, onCallEmail: "risk-pager@sluice.local" },
      admin,
    );
    expect(email.status).toBe(200);
    const teams = await c.trpc("query", "admin.teams", undefined, admin);
    expect(JSON.stringify(teams.json)).not.toContain("very-secret-token");
    expect(JSON.stringify(set.json)).not.toContain("very-secret-token");
    const view = (
      teams.json as {
        result: {
          data: {
            json: { slug: string; onCallEmail: string; contactPoints: { name: string; target: string }[] }[];
          };
        };
      }
    ).result.data.json.find((t) => t.slug === "risk");
    expect(view).toMatchObject({
      onCallEmail: "risk-pager@sluice.local",
      contactPoints: [
        expect.objectContaining({
          name: "#risk-oncall",
          target: "webhook URL stored (host hooks.example.com; never shown)",
        }),
      ],
    });
    expect((await c.db.contactPoint.findFirstOrThrow({ where: { teamId: risk.id } })).secretValue).toBe(
      secretUrl,
    );
    expect(
      JSON.stringify(
        await c.db.auditEvent.findMany({
          where: { action: { startsWith: "team." } },
          select: { reason: true, before: true, after: true },
        }),
      ),
    ).not.toContain("very-secret-token");

    const badEnv = await c.trpc(
      "mutation",
      "admin.createContactPoint",
      {
        teamId: risk.id,
        contactPoint: { name: "pd", kind: "pagerduty", secret: { from: "env", name: "not a name" } },
      },
      admin,
    );
    expect(badEnv.status).toBe(400);
    expect(JSON.stringify(badEnv.json)).toContain(
      "An environment variable's name, e.g. PAYMENTS_SLACK_WEBHOOK_URL",
    );
    // The test button answers in place: no variable RISK_PD_KEY in this console's environment.
    const byEnv = await c.trpc(
      "mutation",
      "admin.createContactPoint",
      {
        teamId: risk.id,
        contactPoint: { name: "PagerDuty", kind: "pagerduty", secret: { from: "env", name: "RISK_PD_KEY" } },
      },
      admin,
    );
    const id = (byEnv.json as { result: { data: { json: { id: string } } } }).result.data.json.id;
    const tested = await c.trpc("mutation", "admin.testContactPoint", { id }, admin);
    expect((tested.json as { result: { data: { json: unknown } } }).result.data.json).toEqual({
      delivered: false,
      status: null,
      error:
        "PagerDuty reads its routing key from the environment variable RISK_PD_KEY, which is not set here: set it on the workers and the console, and restart them",
    });
  });
});
