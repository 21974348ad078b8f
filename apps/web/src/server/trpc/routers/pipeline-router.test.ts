// The pipeline page's reads are for every signed-in role, and for nobody signed out. Checked on the
// real router before any database access (the context has none).
import { describe, expect, it } from "vitest";
import { callerOf, userWith } from "../../testing/router-caller";
import { createTrpcRouter } from "../init";
import { deadLetterRouter } from "./dead-letter-router";
import { pipelineRouter } from "./pipeline-router";

const caller = callerOf(createTrpcRouter({ pipeline: pipelineRouter, deadLetter: deadLetterRouter }));

const reads = ["get", "batches", "deadLetters"] as const;

describe("pipeline page procedures", () => {
  it.each(reads)("pipeline.%s refuses a signed-out caller", async (name) => {
    await expect(caller(null).pipeline[name]({ pipeline: "payments-ledger" })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
  });

  it.each(reads)("pipeline.%s lets a viewer through to input validation", async (name) => {
    await expect(caller(userWith("viewer")).pipeline[name]({ pipeline: "" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });

  it.each(["browse", "inspect"] as const)(
    "deadLetter.%s refuses a signed-out caller and lets a viewer through to input validation",
    async (name) => {
      await expect(
        caller(null).deadLetter[name]({ pipeline: "payments-ledger", id: 1 }),
      ).rejects.toMatchObject({ code: "UNAUTHORIZED" });
      await expect(
        caller(userWith("viewer")).deadLetter[name]({ pipeline: "", id: 1 }),
      ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    },
  );
});
