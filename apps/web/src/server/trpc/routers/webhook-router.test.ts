// Re-queueing webhook deliveries sends to a receiver again, so it needs the operator role; viewers may
// only look. Checked on the real router before any database access (the context has none).
import { describe, expect, it } from "vitest";
import { callerOf, userWith } from "../../testing/router-caller";
import { createTrpcRouter } from "../init";
import { webhookRouter } from "./webhook-router";

const caller = callerOf(createTrpcRouter({ webhook: webhookRouter }));

describe("webhook.requeue", () => {
  it("refuses a signed-out caller and a viewer", async () => {
    await expect(caller(null).webhook.requeue({ pipeline: "fraud-alerts" })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    await expect(
      caller(userWith("viewer")).webhook.requeue({ pipeline: "fraud-alerts" }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("lets an operator through to input validation", async () => {
    await expect(caller(userWith("operator")).webhook.requeue({ pipeline: "" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });

  it("lets a viewer list (the role check passes; only then is input validated)", async () => {
    await expect(caller(userWith("viewer")).webhook.failed({ pipeline: "" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });
});
