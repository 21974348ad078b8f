// A schema change request carries what the approver decides on: the contract diff classified breaking
// or compatible, whether the new version continues the state, and which downstream parts use a changed
// or removed field; only someone else's approval applies it (schema-change.int.test.ts runs it end to end).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { registerPipelineVersion } from "@sluice/engine";
import { createTestDatabase, type TestDatabase } from "@sluice/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDemoPipelineSpecs } from "../demo/demo-pipelines";
import { approveChangeRequest } from "./decide-change-request";
import { requestSchemaChange, type TSchemaChangeImpact } from "./request-schema-change";

const DEMO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../demo/pipelines");
let database: TestDatabase;
let db: PrismaClient;
let ledger: Record<string, unknown> & { contract: { fields: Record<string, unknown> } };
const owner = { actorUserId: "u-owner", actor: "owner@sluice.local", from: { origin: "web" as const } };
const operator = {
  actorUserId: "u-operator",
  actor: "operator@sluice.local",
  from: { origin: "web" as const },
};

beforeAll(async () => {
  database = await createTestDatabase("schema_change");
  db = createPrismaClient(database.url);
  const spec = (await loadDemoPipelineSpecs(DEMO)).find((s) => s.spec.name === "payments-ledger")!.spec;
  ledger = JSON.parse(JSON.stringify(spec));
  // Registered as the engine does, so version 1 has its sink table and serves (a schema change
  // alters that table when it continues it).
  const pool = new pg.Pool({ connectionString: database.url });
  try {
    await registerPipelineVersion(pool, spec);
  } finally {
    await pool.end();
  }
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe("requestSchemaChange", () => {
  it("classifies removing a field an expectation uses as breaking and names the expectation", async () => {
    const { card_country: _removed, ...fields } = ledger.contract.fields;
    const proposed = {
      ...ledger,
      contract: { ...ledger.contract, fields: { ...fields, channel: "string?" } },
      expectations: (ledger.expectations as { name: string }[]).filter(
        (e) => e.name !== "card_country_is_iso",
      ),
    };
    const cr = await requestSchemaChange(db, owner, {
      pipeline: "payments-ledger",
      proposed,
      reason: "upstream dropped card_country",
    });
    expect(cr).toMatchObject({ kind: "schema_change", status: "pending", requestedBy: "owner@sluice.local" });
    const impact = cr.impact as TSchemaChangeImpact;
    expect(impact.contract.compatibility).toBe("breaking");
    expect(impact.contract.changes.map((c) => [c.field, c.kind, c.compatible])).toEqual([
      ["card_country", "field-removed", false],
      ["channel", "field-added", true],
    ]);
    expect(impact.downstream).toEqual([
      { field: "card_country", uses: ["expectations.card_country_is_iso", "the sink table's column"] },
    ]);
    expect(typeof impact.state.compatible).toBe("boolean");
    expect(await db.auditEvent.count({ where: { action: "change.request" } })).toBe(1);
  });

  it("refuses an invalid proposal naming the field, and a spec for another pipeline", async () => {
    await expect(
      requestSchemaChange(db, owner, {
        pipeline: "payments-ledger",
        proposed: { ...ledger, contract: { fields: { event_id: "strin" } } },
        reason: "x",
      }),
    ).rejects.toThrow(
      /^the proposed spec is invalid: contract\.fields\.event_id: "strin" is not a field type/,
    );
    await expect(
      requestSchemaChange(db, owner, {
        pipeline: "payments-ledger",
        proposed: { ...ledger, name: "other" },
        reason: "x",
      }),
    ).rejects.toThrow('name: the proposed spec is for "other", not "payments-ledger"');
  });

  it("its requester can never approve it; another person's approval registers the proposal as the next version", async () => {
    const [cr] = await db.changeRequest.findMany({ where: { kind: "schema_change" } });
    await expect(
      approveChangeRequest(db, owner, { id: cr!.id, pipeline: "payments-ledger" }),
    ).rejects.toThrow(/someone else must approve it/);
    expect((await db.changeRequest.findUniqueOrThrow({ where: { id: cr!.id } })).status).toBe("pending");
    expect(
      await approveChangeRequest(db, operator, { id: cr!.id, pipeline: "payments-ledger" }),
    ).toMatchObject({ status: "applied", result: { version: 2, previousVersion: 1, run: "stopped" } });
    expect(await db.pipelineVersion.count()).toBe(2);
  });
});
