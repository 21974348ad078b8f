// The authorization decision on its own: every role against every action, and an owner's team scope.
import { describe, expect, it } from "vitest";
import { ACTION_NAMES } from "./actions";
import type { TActor } from "./actor";
import { decideAction, decideActionRole, decideRole, mayDoAction } from "./authorize-action";
import { ROLES, type TRole } from "./roles";

const payments = { id: "t_pay", slug: "payments-data", name: "Payments Data" };
const risk = { id: "t_risk", slug: "risk", name: "Risk & Fraud" };
const actor = (role: TRole, teams = [payments]): TActor => ({
  id: `u_${role}`,
  email: `${role}@sluice.local`,
  name: role,
  role,
  teams,
});
const paymentsPipeline = { pipeline: "payments-ledger", ownerTeam: payments };
const riskPipeline = { pipeline: "fraud-alerts", ownerTeam: risk };

describe("decideAction", () => {
  it("signed out is UNAUTHENTICATED for every action", () => {
    for (const action of ACTION_NAMES)
      expect(decideAction(null, action, paymentsPipeline)).toMatchObject({
        ok: false,
        code: "UNAUTHENTICATED",
      });
  });

  it("an admin may do every action, to any team's pipeline", () => {
    for (const action of ACTION_NAMES)
      expect(decideAction(actor("admin", []), action, riskPipeline)).toMatchObject({ ok: true });
  });

  it("a viewer may do nothing, and the refusal names the roles that may", () => {
    for (const action of ACTION_NAMES)
      expect(decideAction(actor("viewer"), action, paymentsPipeline)).toMatchObject({
        ok: false,
        code: "FORBIDDEN",
      });
    const refusal = decideAction(actor("viewer"), "pipeline.lifecycle", paymentsPipeline);
    expect(!refusal.ok && refusal.message).toMatch(
      /Only operator, owner \(of the pipeline's team\) or admin may start, pause.*signed in as viewer/,
    );
  });

  it("an operator runs the whole fleet but registers no specs and manages no people", () => {
    expect(decideAction(actor("operator", []), "pipeline.lifecycle", riskPipeline)).toMatchObject({
      ok: true,
    });
    expect(decideAction(actor("operator", []), "webhook.requeue", riskPipeline)).toMatchObject({ ok: true });
    expect(decideAction(actor("operator"), "pipeline.register", paymentsPipeline)).toMatchObject({
      ok: false,
      code: "FORBIDDEN",
    });
    expect(decideAction(actor("operator"), "admin.users", null)).toMatchObject({
      ok: false,
      code: "FORBIDDEN",
    });
  });

  it("an owner changes their own team's pipelines and no other team's", () => {
    for (const action of ["pipeline.lifecycle", "pipeline.register", "webhook.requeue"] as const) {
      expect(decideAction(actor("owner"), action, paymentsPipeline)).toMatchObject({ ok: true });
      const other = decideAction(actor("owner"), action, riskPipeline);
      expect(other).toMatchObject({ ok: false, code: "FORBIDDEN" });
      expect(!other.ok && other.message).toContain(
        '"fraud-alerts" — it belongs to Risk & Fraud; your teams: Payments Data',
      );
    }
    expect(
      decideAction(actor("owner"), "pipeline.register", { pipeline: "new-one", ownerTeam: null }),
    ).toMatchObject({ ok: false, code: "FORBIDDEN" });
    expect(decideAction(actor("owner"), "admin.teams", null)).toMatchObject({ ok: false, code: "FORBIDDEN" });
  });

  it("the role check alone decides without a target, except for team-scoped roles", () => {
    expect(decideActionRole(actor("owner"), "pipeline.lifecycle")).toBe("needs-target");
    expect(decideActionRole(actor("operator"), "pipeline.lifecycle")).toMatchObject({ ok: true });
    expect(mayDoAction(actor("owner"), "webhook.requeue")).toBe(true);
    expect(mayDoAction(actor("viewer"), "webhook.requeue")).toBe(false);
    expect(mayDoAction(null, "webhook.requeue")).toBe(false);
  });
});

describe("decideRole (reads)", () => {
  it("follows the ladder and names both roles when refusing", () => {
    ROLES.forEach((role, i) => {
      for (const lower of ROLES.slice(0, i + 1))
        expect(decideRole(actor(role), lower)).toMatchObject({ ok: true });
    });
    const refusal = decideRole(actor("operator"), "owner");
    expect(!refusal.ok && refusal.message).toMatch(/owner role.*signed in as operator/);
    // Says who authors and why, so it does not read as owners outranking operators.
    expect(!refusal.ok && refusal.message).toContain(
      "authoring a spec decides what a pipeline computes, which is its owning team's call — operators run pipelines but do not author them",
    );
    expect(decideRole(null, "viewer")).toMatchObject({ ok: false, code: "UNAUTHENTICATED" });
  });
});
