// Re-queueing webhook deliveries sends to a receiver again, so it needs the operator role; viewers may
// only look. Checked on the real router before any database access (the context has none).
import type { TActor, TRole } from "@sluice/services";
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { TTrpcContext } from "../context";
import { createCallerFactory, createTrpcRouter } from "../init";
import { webhookRouter } from "./webhook-router";

const userWith = (role: TRole): TActor => ({ id: `u_${role}`, email: `${role}@sluice.local`, name: role, role, teams: [] });
const caller = (user: TActor | null) =>
  createCallerFactory(createTrpcRouter({ webhook: webhookRouter }))({ user, db: undefined as never, logger: pino({ level: "silent" }), resHeaders: new Headers(), from: { origin: "web" }, dataPlane: undefined as never } satisfies TTrpcContext);

describe("webhook.requeue", () => {
  it("refuses a signed-out caller and a viewer", async () => {
    await expect(caller(null).webhook.requeue({ pipeline: "fraud-alerts" })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(caller(userWith("viewer")).webhook.requeue({ pipeline: "fraud-alerts" })).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("lets an operator through to input validation", async () => {
    await expect(caller(userWith("operator")).webhook.requeue({ pipeline: "" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("lets a viewer list (the role check passes; only then is input validated)", async () => {
    await expect(caller(userWith("viewer")).webhook.failed({ pipeline: "" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});
