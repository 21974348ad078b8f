// The dashboards' reads are for every signed-in role and nobody signed out; inputs are validated with
// messages that name the field. Checked on the real router before any database access.
import { describe, expect, it } from "vitest";
import { callerOf, userWith } from "../../testing/router-caller";
import { createTrpcRouter } from "../init";
import { fleetRouter, signalsRouter } from "./signals-router";

const caller = callerOf(createTrpcRouter({ fleet: fleetRouter, signals: signalsRouter }));

describe("dashboard procedures", () => {
  it("fleet.list and every signals read refuse a signed-out caller", async () => {
    await expect(caller(null).fleet.list()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(
      caller(null).signals.series({ pipeline: "p", range: { preset: "1h" } }),
    ).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(caller(null).signals.batch({ pipeline: "p", batchId: 1 })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
  });

  it("a viewer gets through to validation: a backwards range, an unknown preset and a negative batch id are refused", async () => {
    const viewer = caller(userWith("viewer"));
    await expect(
      viewer.signals.series({ pipeline: "p", range: { from: new Date(2000), to: new Date(1000) } }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(
      viewer.signals.signals({ pipeline: "p", range: { preset: "2y" as never } }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(viewer.signals.batch({ pipeline: "p", batchId: -1 })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(viewer.signals.offsets({ pipeline: "", version: 1 })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });
});
