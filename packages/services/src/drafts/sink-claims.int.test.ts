// Issue 19 item 5 — "an owner can write into another team's sink table" — as an attacker tried it, on
// real Postgres: a Payments Data owner names Risk & Fraud's table, or a control-plane table
// (`sessions`, `team_members`), as the sink of a pipeline of their own. draft.check says it would be
// refused, naming the owner team; registering it (the console's and the CLI's one registration) is
// refused, audited, and changes nothing; the owner pipeline's own new versions keep their table; two
// pipelines claiming one new table at once end with exactly one owner; and the migration's backfill
// gives a table two pipelines already shared to the one registered first.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrismaClient, type Prisma, type PrismaClient } from "@sluice/db";
import { registerPipelineVersion, SinkClaimError } from "@sluice/engine";
import { validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { createTestDatabase, endPool, type TestDatabase } from "@sluice/testing";
import type { TActor } from "../auth/actor";
import { checkDraft } from "./check-draft";
import { submitPipelineDraft } from "./submit-pipeline-draft";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");

let database: TestDatabase;
let pool: pg.Pool;
let db: PrismaClient;
let owner: TActor;

function spec(
  name: string,
  owner: string,
  table: string,
  extra: Record<string, unknown> = {},
): TPipelineSpec {
  const result = validateSpec({
    name,
    owner,
    source: { kafka: { topic: "payments" } },
    format: "json",
    contract: { fields: { event_id: "string", amount: "decimal" } },
    dedupe: { key: ["event_id"], within: "24h" },
    sink: { postgres: { table } },
    ...extra,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.spec;
}
const text = (s: TPipelineSpec) => JSON.stringify(s);
const versions = async (name: string) => db.pipelineVersion.count({ where: { pipeline: { name } } });

beforeAll(async () => {
  database = await createTestDatabase("sink_claims");
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
  db = createPrismaClient(database.url);
  await db.team.create({ data: { slug: "risk", name: "Risk & Fraud" } });
  const payments = await db.team.create({ data: { slug: "payments-data", name: "Payments Data" } });
  const user = await db.user.create({
    data: { email: "owner@sluice.local", name: "Owner", role: "owner", emailVerified: true },
  });
  await db.teamMember.create({ data: { userId: user.id, teamId: payments.id } });
  owner = {
    id: user.id,
    email: user.email,
    name: user.name,
    role: "owner",
    teams: [{ id: payments.id, slug: "payments-data", name: "Payments Data" }],
  } as TActor;
  await registerPipelineVersion(pool, spec("fraud-alerts", "risk", "fraud_cases"));
});
afterAll(async () => {
  await db?.$disconnect();
  if (pool) await endPool(pool);
  await database?.drop();
});

describe("a sink table belongs to one pipeline", () => {
  it("the first registration claims its table", async () => {
    const claims = await pool.query(
      `SELECT c.table_name, p.name FROM sink_claims c JOIN pipelines p ON p.id = c.pipeline_id`,
    );
    expect(claims.rows).toEqual([{ table_name: "public.fraud_cases", name: "fraud-alerts" }]);
  });

  it("another team's table: draft.check says who owns it, registering is refused and audited, nothing changes", async () => {
    const attack = spec("my-ledger", "payments-data", "fraud_cases");
    const checked = await checkDraft({ db, pool }, text(attack));
    expect(checked).toMatchObject({
      ok: true,
      registration: {
        kind: "refused",
        message:
          "Registering it would be refused: sink table fraud_cases belongs to pipeline fraud-alerts of team Risk & Fraud: a sink table is written by one pipeline only — choose another table name.",
      },
    });
    const submitted = await submitPipelineDraft(
      { db, pool },
      { spec: attack, reason: "take it", freshState: false, actor: owner, from: { origin: "web" } },
    );
    expect(submitted).toMatchObject({
      ok: false,
      code: "SINK_TAKEN",
      message: expect.stringContaining("belongs to pipeline fraud-alerts of team Risk & Fraud"),
    });
    expect(await db.pipeline.findUnique({ where: { name: "my-ledger" } })).toBeNull();
    const audit = await db.auditEvent.findFirstOrThrow({ where: { action: "pipeline.register" } });
    expect(audit).toMatchObject({
      outcome: "refused",
      actor: "owner@sluice.local",
      targetLabel: "my-ledger",
    });
    // Schema-qualified, and through the engine directly (the CLI's path): the same table, the same answer.
    await expect(
      registerPipelineVersion(pool, spec("my-ledger", "payments-data", "public.fraud_cases")),
    ).rejects.toThrow(SinkClaimError);
    expect(await versions("my-ledger")).toBe(0);
  });

  it("a control-plane table (or any table no pipeline owns) is never a sink", async () => {
    for (const table of ["sessions", "team_members", "public.audit_events", "sink_claims"]) {
      const s = spec("sneaky", "payments-data", table);
      const checked = await checkDraft({ db, pool }, text(s));
      expect(checked).toMatchObject({
        ok: true,
        registration: {
          kind: "refused",
          message: expect.stringContaining(`${table} is an existing table no pipeline owns`),
        },
      });
      await expect(registerPipelineVersion(pool, s)).rejects.toThrow(
        `sneaky: ${table} is an existing table no pipeline owns`,
      );
    }
    expect(await db.pipeline.findUnique({ where: { name: "sneaky" } })).toBeNull();
  });

  it("the owner's new versions keep writing their table, and a new table of theirs is claimed too", async () => {
    const v2 = spec("fraud-alerts", "risk", "fraud_cases", { description: "same table, continued" });
    expect((await checkDraft({ db, pool }, text(v2))).ok && true).toBe(true);
    expect(await registerPipelineVersion(pool, v2)).toMatchObject({ version: 2, created: true });
    const beside = spec("fraud-alerts", "risk", "fraud_cases_v3");
    expect(await registerPipelineVersion(pool, beside, { continueFromPrevious: false })).toMatchObject({
      version: 3,
    });
    const claims = await pool.query(
      `SELECT c.table_name FROM sink_claims c JOIN pipelines p ON p.id = c.pipeline_id WHERE p.name = 'fraud-alerts' ORDER BY 1`,
    );
    expect(claims.rows.map((r) => r.table_name)).toEqual(["public.fraud_cases", "public.fraud_cases_v3"]);
  });

  it("two pipelines claiming one new table at once: exactly one gets it", async () => {
    const results = await Promise.allSettled([
      registerPipelineVersion(pool, spec("race-a", "payments-data", "contested")),
      registerPipelineVersion(pool, spec("race-b", "risk", "contested")),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(SinkClaimError);
    const owners = await pool.query(
      `SELECT p.name FROM sink_claims c JOIN pipelines p ON p.id = c.pipeline_id WHERE c.table_name = 'public.contested'`,
    );
    expect(owners.rows).toHaveLength(1);
    expect((await versions("race-a")) + (await versions("race-b"))).toBe(1);
  });

  it("the migration's backfill gives a table two pipelines already shared to the one registered first", async () => {
    const migration = await readFile(
      path.join(REPO_ROOT, "prisma/migrations/20261202060000_sink_claims/migration.sql"),
      "utf8",
    );
    const backfill = migration.slice(migration.indexOf('INSERT INTO "sink_claims"'));
    // As before claims existed: a second pipeline registered onto fraud_cases, and an outputs pipeline.
    const team = await db.team.findUniqueOrThrow({ where: { slug: "payments-data" } });
    const later = await db.pipeline.create({ data: { name: "shared-later", ownerTeamId: team.id } });
    await db.pipelineVersion.create({
      data: {
        pipelineId: later.id,
        version: 1,
        specHash: "x",
        spec: JSON.parse(text(spec("shared-later", "payments-data", "fraud_cases"))) as Prisma.InputJsonValue,
      },
    });
    await db.pipelineVersion.create({
      data: {
        pipelineId: later.id,
        version: 2,
        specHash: "y",
        spec: {
          name: "shared-later",
          outputs: {
            a: { sink: { postgres: { table: "ops.out_a" } } },
            b: { sink: { webhook: { url: "x" } } },
          },
        },
      },
    });
    await pool.query(`DELETE FROM sink_claims`);
    await pool.query(backfill);
    const claims = await pool.query(
      `SELECT c.table_name, p.name FROM sink_claims c JOIN pipelines p ON p.id = c.pipeline_id ORDER BY 1`,
    );
    expect(claims.rows).toEqual([
      { table_name: "ops.out_a", name: "shared-later" },
      { table_name: "public.contested", name: expect.stringMatching(/^race-/) },
      { table_name: "public.fraud_cases", name: "fraud-alerts" },
      { table_name: "public.fraud_cases_v3", name: "fraud-alerts" },
    ]);
  });

  it("another team's pipeline as a join's dimension: draft.check and registering refuse it, naming both teams", async () => {
    const history = validateSpec({
      name: "customer-history",
      owner: "risk",
      source: { kafka: { topic: "customer-changes" } },
      contract: { fields: { customer_id: "string", status: "string", changed_at: "timestamp" } },
      eventTime: { column: "changed_at", watermarkDelay: "1m" },
      cdc: { key: ["customer_id"], sequenceBy: "changed_at", scdType: 2 },
      sink: { postgres: { table: "customer_history" } },
    });
    if (!history.ok) throw new Error(JSON.stringify(history.errors));
    await registerPipelineVersion(pool, history.spec);
    const joined = spec("enriched", "payments-data", "enriched", {
      contract: { fields: { event_id: "string", customer_id: "string", event_time: "timestamp" } },
      eventTime: { column: "event_time", watermarkDelay: "1m" },
      join: {
        dimension: {
          pipeline: "customer-history",
          key: ["customer_id"],
          contract: { fields: { customer_id: "string", status: "string" } },
        },
        on: { customer_id: "customer_id" },
        fields: { customer_status: "status" },
        waitFor: "5m",
      },
    });
    const why =
      "belongs to team risk, and enriched to payments-data: a join reads its dimension pipeline's table, so both must be owned by the same team";
    expect(await checkDraft({ db, pool }, text(joined))).toMatchObject({
      ok: true,
      registration: { kind: "refused", message: expect.stringContaining(why) },
    });
    const submitted = await submitPipelineDraft(
      { db, pool },
      { spec: joined, reason: "enrich", freshState: false, actor: owner, from: { origin: "web" } },
    );
    expect(submitted).toMatchObject({
      ok: false,
      code: "DIMENSION_REFUSED",
      message: expect.stringContaining(why),
    });
    expect(await versions("enriched")).toBe(0);
  });
});
