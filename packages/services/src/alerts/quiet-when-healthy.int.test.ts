// A healthy quick start's first hour raises no alert. The six demo pipelines (demo/pipelines/*.yaml,
// as shipped) commit a batch every 20 s for an hour with steady input, and the workers' offset sampler
// records the topic every 10 s — through the real write paths (batch_log and its rollup trigger,
// recordOffsetSamples) into real Postgres. Each pipeline's state grows the way its spec says it must:
// until its horizon has filled (the ledger's and the enriched ledger's 6 h watermark delay: all hour;
// the settlement views' 2-day finance lateness: all hour; the settlements' 5-minute windows with 10 m
// delay and 20 m lateness: ~35 minutes; fraud alerts' 30 s delay: a minute and a half), then level.
// The evaluator ticks every simulated minute: no rule of the six may fire. A fifth
// pipeline like fraud alerts whose watermark is stuck (state growing for the whole hour, far past its
// horizon) is the adversarial control: state_growth fires for it.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { parseSpecOrThrow } from "@sluice/pipeline-spec";
import { createTestDatabase, type TestDatabase, serveNewestVersion } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordOffsetSamples } from "../signals/record-offset-samples";
import { runAlertEvaluation } from "./run-alert-evaluation";
import { RULE_KINDS } from "./rule-kinds";

const DEMO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../demo/pipelines");
const DEMO_PIPELINES = [
  "payments-ledger",
  "merchant-settlements",
  "customer-status",
  "fraud-alerts",
  "payments-enriched",
  "settlement-views",
];
const RATE = 50; // events per second, the demo producer's default
const BATCH_S = 20;
const HOUR_S = 3600;

let database: TestDatabase;
let db: PrismaClient;
// A minute-aligned start an hour and a bit ago, so the simulated hour ends before the real now.
const T0 = new Date(Math.floor((Date.now() - 62 * 60_000) / 60_000) * 60_000);
const at = (s: number) => new Date(T0.getTime() + s * 1000);

/** State rows after `s` seconds for a pipeline whose state holds `horizonS` seconds of input: fills, then levels. */
const healthyState = (horizonS: number) => (s: number) =>
  Math.round(RATE * Math.min(s, horizonS) * (1 - 0.02 * ((s / BATCH_S) % 3)));

async function register(name: string, spec: object, teamId: string): Promise<string> {
  const p = await db.pipeline.create({
    data: { name, ownerTeamId: teamId, versions: { create: { version: 1, spec, specHash: name } } },
    include: { versions: true },
  });
  await serveNewestVersion(db, p.id);
  const pv = p.versions[0]!.id;
  await db.pipelineRun.create({
    data: {
      pipelineVersionId: pv,
      desiredState: "running",
      status: "running",
      nextBatchAt: new Date(Date.now() + 3600_000),
    },
  });
  return pv;
}

/** One committed batch as the engine's commit writes it (the rollup trigger folds it into every grain). */
async function commitBatch(pv: string, batchId: number, s: number, stateRows: number): Promise<void> {
  const committedAt = at(s);
  const rows = RATE * BATCH_S;
  const outcomes = { sink: rows - 20, duplicate: 20, filtered: 0, quarantined: 0, deadLetter: 0, late: 0 };
  await db.$executeRaw`
    INSERT INTO batch_log (pipeline_version_id, batch_id, committed_at, input_rows, sink_rows, outcomes, progress)
    VALUES (${pv}, ${batchId}, ${committedAt}, ${rows}, ${rows - 20}, ${JSON.stringify(outcomes)}::jsonb,
            ${JSON.stringify({
              outcomes,
              stateRows,
              stateBytes: stateRows * 60,
              watermark: new Date(committedAt.getTime() - 30_000).toISOString(),
              eventTimeMax: committedAt.toISOString(),
              ingestTimeMax: new Date(committedAt.getTime() - 1000).toISOString(),
              durationMs: { plan: 5, read: 50, process: 40, commit: 30, total: 125 },
            })}::jsonb)`;
}

beforeAll(async () => {
  database = await createTestDatabase("quiet_when_healthy");
  db = createPrismaClient(database.url);
  const team = await db.team.create({ data: { slug: "payments-data", name: "Payments Data" } });
  const curves: { pv: string; state: (s: number) => number }[] = [];
  for (const name of DEMO_PIPELINES) {
    const spec = parseSpecOrThrow(await readFile(path.join(DEMO, `${name}.yaml`), "utf8"));
    const horizonS =
      {
        "payments-ledger": 6 * 3600,
        "payments-enriched": 6 * 3600,
        "settlement-views": 2 * 86_400,
        "merchant-settlements": 35 * 60,
      }[name] ?? 90;
    curves.push({ pv: await register(name, spec, team.id), state: healthyState(horizonS) });
  }
  const fraud = parseSpecOrThrow(await readFile(path.join(DEMO, "fraud-alerts.yaml"), "utf8"));
  const stuck = await register("stuck-watermark", { ...fraud, name: "stuck-watermark" }, team.id);
  curves.push({ pv: stuck, state: (s) => RATE * s }); // never evicts: its watermark does not move
  for (let s = BATCH_S, batch = 0; s <= HOUR_S; s += BATCH_S, batch++)
    for (const c of curves) await commitBatch(c.pv, batch, s, c.state(s));
  for (let s = 0; s <= HOUR_S; s += 10)
    await recordOffsetSamples(
      db,
      curves.map((c) => ({
        pipelineVersionId: c.pv,
        partition: 0,
        latestOffset: RATE * s + 100,
        committedOffset: RATE * s,
      })),
      at(s),
    );
}, 120_000);
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe("quiet when healthy", () => {
  it("the demo's first hour raises no alert; a stuck watermark's state growth does", async () => {
    for (let minute = 1; minute <= 60; minute++) {
      const r = await runAlertEvaluation(db, {
        evaluator: "workers",
        owner: "w1",
        leaseMs: 600_000,
        kinds: RULE_KINDS.filter((k) => k !== "no_worker_alive"),
        now: at(minute * 60 + 5),
      });
      expect(r.evaluated).toBe(true);
    }
    const episodes = await db.alertEpisode.findMany({
      include: { rule: { include: { pipeline: { select: { name: true } } } } },
    });
    const fired = episodes.map((e) => `${e.rule.pipeline?.name ?? "fleet"}: ${e.rule.kind}`);
    expect(fired).toEqual(["stuck-watermark: state_growth"]);

    // What the demo pipelines' state_growth rules said at the end of the hour: the ledger is still
    // filling its 6-hour horizon; the settlements' state filled and levelled.
    const rules = await db.alertRule.findMany({
      where: { kind: "state_growth" },
      include: { pipeline: { select: { name: true } } },
    });
    const value = (name: string) => rules.find((r) => r.pipeline?.name === name);
    expect(value("payments-ledger")?.pendingSince).toBeNull();
    expect(value("payments-enriched")?.pendingSince).toBeNull();
    expect(value("settlement-views")?.pendingSince).toBeNull();
    expect(value("merchant-settlements")?.pendingSince).toBeNull();
    expect(Number(value("merchant-settlements")?.lastValue)).toBeLessThan(0.1);
    expect(episodes[0]!.summary).toMatch(/never shrinking/);
  }, 180_000);
});
