// roleProcedure and actionProcedure on a router built from the real middleware: they refuse before
// the procedure runs, in the order sign-in → role → input → team, with the decision's own message.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { callerOf, userWith } from "../testing/router-caller";
import { actionProcedure, createTrpcRouter, roleProcedure } from "./init";

describe("roleProcedure and actionProcedure", () => {
  // The context carries no database: every refusal below is decided before one would be needed (the
  // audit event a refusal records fails without one, and is only logged — silently here).
  const router = createTrpcRouter({
    read: roleProcedure("viewer").query(({ ctx }) => ctx.user.role),
    adminRead: roleProcedure("admin").query(() => "secret"),
    manageUsers: actionProcedure("admin.users", z.object({ email: z.email() })).mutation(
      ({ ctx }) => `done by ${ctx.user.email}`,
    ),
    pause: actionProcedure("pipeline.lifecycle", z.object({ pipeline: z.string().min(1) }), (i) => ({
      pipeline: i.pipeline,
    })).mutation(() => "paused"),
  });
  const caller = callerOf(router);

  it("rejects a caller without a session before anything else", async () => {
    await expect(caller(null).read()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(caller(null).pause({ pipeline: "" })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      message: "Sign in to continue.",
    });
  });

  it("refuses a role below the ladder's minimum, naming both roles", async () => {
    await expect(caller(userWith("owner")).adminRead()).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringMatching(/admin role.*signed in as owner/),
    });
    await expect(caller(userWith("viewer")).read()).resolves.toBe("viewer");
  });

  it("refuses a role that may never do the action before validating its input", async () => {
    await expect(caller(userWith("viewer")).pause({ pipeline: "" })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(caller(userWith("operator")).manageUsers({ email: "not-an-email" })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });

  it("validates input once the role may act, and hands the procedure the actor", async () => {
    await expect(caller(userWith("admin")).manageUsers({ email: "not-an-email" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(caller(userWith("admin")).manageUsers({ email: "x@sluice.local" })).resolves.toBe(
      "done by admin@sluice.local",
    );
    await expect(caller(userWith("operator")).pause({ pipeline: "payments-ledger" })).resolves.toBe("paused");
  });
});
