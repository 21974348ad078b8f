import type { TRole, TSessionUser } from "@sluice/services";
import type { Logger } from "pino";
import { describe, expect, it } from "vitest";
import { authorize } from "./authorize";
import type { TTrpcContext } from "./context";
import { createCallerFactory, createTrpcRouter, roleProcedure } from "./init";

const userWith = (role: TRole): TSessionUser => ({
  id: `u_${role}`,
  email: `${role}@sluice.local`,
  name: role,
  role,
});

describe("authorize", () => {
  it("no session is UNAUTHORIZED, whatever the required role", () => {
    expect(authorize(null, "viewer")).toMatchObject({ ok: false, code: "UNAUTHORIZED" });
  });

  it("a role below the required one is FORBIDDEN and the message names both roles", () => {
    const decision = authorize(userWith("operator"), "owner");
    expect(decision).toMatchObject({ ok: false, code: "FORBIDDEN" });
    expect(!decision.ok && decision.message).toMatch(/owner role.*signed in as operator/);
  });

  it("the required role and every role above it are allowed", () => {
    for (const role of ["owner", "admin"] as const) {
      expect(authorize(userWith(role), "owner")).toEqual({ ok: true, user: userWith(role) });
    }
  });
});

describe("roleProcedure", () => {
  // A router built from the real middleware; the context carries no database because none is used.
  const router = createTrpcRouter({
    read: roleProcedure("viewer").query(({ ctx }) => ctx.user.role),
    approve: roleProcedure("operator").mutation(({ ctx }) => `approved by ${ctx.user.email}`),
  });
  const caller = (user: TSessionUser | null) =>
    createCallerFactory(router)({
      user,
      db: undefined as never,
      logger: undefined as unknown as Logger,
      resHeaders: new Headers(),
      https: false,
    } satisfies TTrpcContext);

  it("rejects a caller without a session before the procedure runs", async () => {
    await expect(caller(null).read()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("rejects a viewer from an operator procedure but lets the viewer read", async () => {
    await expect(caller(userWith("viewer")).approve()).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(caller(userWith("viewer")).read()).resolves.toBe("viewer");
  });

  it("hands the procedure the signed-in user", async () => {
    await expect(caller(userWith("admin")).approve()).resolves.toBe("approved by admin@sluice.local");
  });
});
