// Rules scoped to one output of a pipeline with several outputs, against real Postgres: progress
// records committed into batch_log (the trigger folds each output into output_rollup), a rule added for
// each output through the service the console calls, and one evaluation tick. The fraud view's late
// rows fire its rule and nothing else: not finance's (no late rows of its own) and not the pipeline's
// own late_rate (a row is the pipeline's late only when late for every output). The page names the
// output. An output the serving version does not declare is refused, saying which it declares.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { createTestDatabase, serveNewestVersion, type TestDatabase } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeFacts } from "../contact-points/notification-words";
import { commitOutputsBatch, outputProgress } from "../signals/progress-records.test-helpers";
import type { TAlertActor } from "./alert-change";
import { createAlertRule } from "./create-alert-rule";
import type { TNotificationFacts } from "./notification-facts";
import { runAlertEvaluation } from "./run-alert-evaluation";
import { RULE_KINDS } from "./rule-kinds";
import { updateAlertRule } from "./update-alert-rule";

let database: TestDatabase;
let db: PrismaClient;
let pv: string;
const owner: TAlertActor = { userId: null, label: "owner@sluice.local", from: { origin: "web" } };
const NOW = new Date(Math.floor(Date.now() / 10_000) * 10_000);
const ago = (s: number) => new Date(NOW.getTime() - s * 1000);
const PIPELINE = "settlement-views";

beforeAll(async () => {
  database = await createTestDatabase("output_alerts");
  db = createPrismaClient(database.url);
  const team = await db.team.create({ data: { slug: "payments-data", name: "Payments Data" } });
  const p = await db.pipeline.create({
    data: {
      name: PIPELINE,
      ownerTeamId: team.id,
      versions: {
        create: {
          version: 1,
          spec: { name: PIPELINE, outputs: { fraud: { sink: {} }, finance: { sink: {} } } },
          specHash: PIPELINE,
        },
      },
    },
    include: { versions: true },
  });
  pv = await serveNewestVersion(db, p.id);
  await db.pipelineRun.create({
    data: { pipelineVersionId: pv, desiredState: "running", status: "running", nextBatchAt: ago(-3600) },
  });
  // Four minutes of batches: fraud finds 30 of each 100 rows late (its 20-minute lateness), finance none.
  for (let b = 0; b < 24; b++)
    await commitOutputsBatch(db, pv, b, ago(240 - b * 10), [
      outputProgress("fraud", { rows: 100, late: 30, stateRows: 10 }),
      outputProgress("finance", { rows: 100, late: 0, stateRows: 500 }),
    ]);
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe("alert rules for one output", () => {
  it("refuses an output the serving version does not declare, and a kind not judged per output", async () => {
    await expect(
      createAlertRule(db, owner, { pipeline: PIPELINE, kind: "late_rate", output: "audit" }),
    ).rejects.toThrow(`output: "${PIPELINE}" v1 declares no output "audit"; it declares finance, fraud.`);
    await expect(
      createAlertRule(db, owner, { pipeline: PIPELINE, kind: "freshness", output: "fraud" }),
    ).rejects.toThrow(/output: freshness watches the pipeline as a whole/);
    expect(await db.alertRule.count({ where: { output: { not: null } } })).toBe(0);
  });

  it("a late_rate rule for fraud fires on fraud's late rows; finance's rule and the pipeline's own stay quiet", async () => {
    for (const output of ["fraud", "finance"])
      await createAlertRule(db, owner, {
        pipeline: PIPELINE,
        kind: "late_rate",
        output,
        threshold: 0.1,
        forSeconds: 0,
      });
    await expect(
      createAlertRule(db, owner, { pipeline: PIPELINE, kind: "late_rate", output: "fraud" }),
    ).rejects.toThrow(`"${PIPELINE}" already has a late_rate rule for output fraud: change that one.`);
    // Updating names the rule by its output too.
    await updateAlertRule(db, owner, {
      pipeline: PIPELINE,
      kind: "late_rate",
      output: "finance",
      forSeconds: 0,
    });

    const r = await runAlertEvaluation(db, {
      evaluator: "workers",
      owner: "w1",
      leaseMs: 60_000,
      kinds: RULE_KINDS.filter((k) => k !== "no_worker_alive"),
      now: NOW,
    });
    expect(r.evaluated).toBe(true);
    const rules = await db.alertRule.findMany({
      where: { kind: "late_rate" },
      include: { episodes: true },
      orderBy: { output: "asc" },
    });
    expect(rules.map((x) => [x.output, x.lastValue, x.episodes.length])).toEqual([
      ["finance", 0, 0],
      ["fraud", 0.3, 1],
      [null, 0, 0], // the pipeline's own: no row was late for every output
    ]);
    const episode = rules.find((x) => x.output === "fraud")!.episodes[0]!;
    expect(episode.summary).toBe("30% of 2400 rows too late to count (last 5 min)");
    // Every other rule of the pipeline is quiet too.
    expect(await db.alertEpisode.count()).toBe(1);

    // The notification names the output (nobody paged: the team has no contact point, said so).
    const n = await db.alertNotification.findFirstOrThrow({ where: { episodeId: episode.id } });
    const facts = n.payload as unknown as TNotificationFacts;
    expect(facts.output).toBe("fraud");
    const words = describeFacts(facts, "https://sluice.example");
    expect(words.where).toBe(`${PIPELINE} v1, output fraud`);
    expect(words.headline).toBe(
      "[FIRING] warning Late rows over threshold on settlement-views v1, output fraud: 30% of 2400 rows too late to count (last 5 min)",
    );
  });
});
