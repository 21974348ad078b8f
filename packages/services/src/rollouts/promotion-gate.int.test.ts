// A promotion must pass a clean reconciliation (promotion-gate.ts), proven on real Kafka and Postgres
// with the merchant settlements of issue 20 (blue: 5-minute windows):
//   - a green with a bug — an expectation that drops valid rows — is caught: the rollout's
//     reconciliation finds the windows that differ and says why ("dropped by expectation …"), the
//     promotion request is refused saying what differs, and blue never stopped serving (its run
//     running, the serving view still over blue's table, readers' rows unchanged);
//   - the change the issue asks for, 5- to 10-minute windows, compares clean at 10 minutes (the
//     average and distinct counts listed as not compared) when the workers' pass reconciles it, and is
//     promoted; an approval is refused while a newer reconciliation is not clean, and goes through once
//     a clean one is stored again.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { PipelineRunner } from "@sluice/engine";
import {
  createEngineFixture,
  drainPipeline,
  drainRunner,
  settlementsSpec,
  settlementsWorkload,
  type EngineFixture,
} from "@sluice/engine/testing";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { producePayments } from "@sluice/producer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChangeRequestError } from "../change-requests/change-request-view";
import { approveChangeRequest } from "../change-requests/decide-change-request";
import { kafkaTopicOffsets } from "../change-requests/topic-offsets";
import { reconcileRollout } from "./reconcile-rollout";
import { reconcileRunningRollouts } from "./reconcile-running-rollouts";
import { requestPromotion } from "./request-promotion";
import { abortRollout } from "./rollback-rollout";
import { RolloutError } from "./rollout-error";
import { storeReconciliation } from "./run-reconciliation";
import { startRollout } from "./start-rollout";

const NAME = "merchant-settlements";
const TABLE = "merchant_settlements";
const owner = { actorUserId: "u-owner", actor: "owner@sluice.local", from: { origin: "cli" as const } };
const operator = { actorUserId: "u-op", actor: "op@sluice.local", from: { origin: "cli" as const } };

let fx: EngineFixture;
let db: PrismaClient;
let blueId: string;

const windowed = (size: string, overrides: Record<string, unknown> = {}): TPipelineSpec =>
  settlementsSpec(
    fx.topic,
    NAME,
    TABLE,
    { window: { tumbling: size }, outputMode: "update", allowedLateness: "3m" },
    overrides,
  );

/** What readers of the serving name get, and which physical table the view selects from. */
async function readers() {
  const rows = await fx.pool.query<{ n: number; settled: string }>(
    `SELECT count(*)::int AS n, sum(settled)::text AS settled FROM ${TABLE}`,
  );
  const view = await fx.pool.query<{ definition: string }>(
    `SELECT definition FROM pg_views WHERE schemaname = 'public' AND viewname = $1`,
    [TABLE],
  );
  return { ...rows.rows[0]!, over: /sluice_sinks\."([^"]+)"/.exec(view.rows[0]!.definition)?.[1] };
}
const runOf = async (pv: string) =>
  (
    await fx.pool.query<{ phase: string }>(
      `SELECT status::text || '/' || desired_state::text AS phase FROM pipeline_runs WHERE pipeline_version_id = $1`,
      [pv],
    )
  ).rows[0]?.phase;
const serving = async () =>
  (
    await fx.pool.query<{ id: string }>(`SELECT serving_version_id AS id FROM pipelines WHERE name = $1`, [
      NAME,
    ])
  ).rows[0]!.id;

/** Starts green beside blue from the earliest offsets and lets it catch up (as the workers would). */
async function startGreen(spec: TPipelineSpec, reason: string): Promise<string> {
  const started = await startRollout(db, kafkaTopicOffsets(fx.kafka), owner, spec, {
    from: { kind: "earliest" },
    reason,
  });
  const runner = await PipelineRunner.open(fx.resources, {
    pipelineVersionId: started.green.pipelineVersionId,
    spec,
    owner: "test",
  });
  await drainRunner(runner);
  return started.green.pipelineVersionId;
}

beforeAll(async () => {
  fx = await createEngineFixture("promotion-gate");
  db = createPrismaClient(fx.db.url);
  await producePayments({ topic: fx.topic, kafka: fx.kafka, ...settlementsWorkload(), log: () => undefined });
  blueId = (await drainPipeline(fx, windowed("5m"))).pipelineVersionId;
  await fx.pool.query(
    `INSERT INTO pipeline_runs (pipeline_version_id, status, desired_state) VALUES ($1, 'running', 'running')`,
    [blueId],
  );
});
afterAll(async () => {
  await db?.$disconnect();
  await fx?.close();
});

describe("promotion requires a clean reconciliation", () => {
  it("a green whose expectation drops valid rows: differences found and explained, promotion refused, blue serves throughout", async () => {
    const before = await readers();
    expect(before).toMatchObject({ over: `${TABLE}@v1` });
    expect(before.n).toBeGreaterThan(50);
    const greenId = await startGreen(
      windowed("10m", {
        expectations: [{ name: "amount_plausible", expr: "amount > 1000", action: "drop" }],
      }),
      "10-minute windows, implausible amounts dropped",
    );

    // No reconciliation yet: refused, saying so.
    const early = await requestPromotion(db, owner, { pipeline: NAME, reason: "looks fine" }).catch(
      (e: unknown) => e,
    );
    expect(early).toBeInstanceOf(RolloutError);
    expect((early as Error).message).toContain("no reconciliation has been run yet");

    const done = await reconcileRollout(fx.pool, db, NAME, owner);
    expect(done).toMatchObject({ blue: { version: 1 }, green: { version: 2 }, skipped: [] });
    expect(done.reconciliations).toHaveLength(1);
    const [r] = done.reconciliations;
    expect(r).toMatchObject({
      status: "compared",
      output: "",
      blueVersionId: blueId,
      greenVersionId: greenId,
    });
    expect(r!.differing! + r!.onlyBlue!).toBeGreaterThan(10);
    expect(r!.onlyGreen).toBe(0);
    // Compared at 10 minutes over what both have finalized, from where both started.
    expect(r!.report!.range).toMatchObject({ basis: "event_time", grain: "10m" });
    const dropped = r!.report!.outcomes!.counts.find((c) => c.metric === "dropped:amount_plausible")!;
    expect(dropped.blue).toBe(0);
    expect(dropped.green).toBeGreaterThan(100);
    expect(r!.report!.outcomes!.explanations[0]).toBe(
      `dropped by expectation \`amount_plausible\` in green: ${dropped.green} (blue: 0)`,
    );

    const refused = await requestPromotion(db, owner, { pipeline: NAME, reason: "ship it" }).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(RolloutError);
    const message = (refused as Error).message;
    expect(message).toContain(`promotion of ${NAME} refused`);
    expect(message).toMatch(/found (\d+ keys differ, )?\d+ keys only in blue/);
    expect(message).toContain("dropped by expectation `amount_plausible` in green");
    expect(message).toContain("run the reconciliation again");
    const requests = await fx.pool.query(`SELECT id FROM change_requests WHERE kind = 'promotion'`);
    expect(requests.rows).toEqual([]);

    // Blue never stopped serving: its run, the serving view over its table, the readers' rows.
    expect(await serving()).toBe(blueId);
    expect(await runOf(blueId)).toBe("running/running");
    expect(await readers()).toEqual(before);

    // A person who read the differences may still ask, saying so: the request carries what they
    // accepted, for its approver; nothing switches until someone else approves it.
    const accepted = await requestPromotion(db, owner, {
      pipeline: NAME,
      reason: "read the differences",
      acceptDifferences: true,
    });
    expect(accepted).toMatchObject({ kind: "promotion", status: "pending" });
    expect((accepted.impact as { acceptedDifferences: string[] }).acceptedDifferences[0]).toMatch(
      /^reconciliation #\d+: \d+ keys differ, \d+ only in blue, 0 only in green — accepted by owner@/,
    );
    expect(await serving()).toBe(blueId);

    const aborted = await abortRollout(db, operator, {
      pipeline: NAME,
      reason: "green drops valid payments",
    });
    expect(aborted.dropped).toEqual([`${TABLE}@v2`]);
    expect(await readers()).toEqual(before);
  });

  it("5- to 10-minute windows compare clean and are promoted; an approval waits for a clean newest reconciliation", async () => {
    const greenId = await startGreen(windowed("10m"), "10-minute settlement windows");
    // The workers' pass (workers/src/scheduling/rollout-reconciler.ts) reconciles it.
    const pass = await reconcileRunningRollouts(fx.pool, db, { freshForMs: 0 });
    expect(pass.failed).toEqual([]);
    expect(pass.reconciled.map((x) => x.pipeline)).toEqual([NAME]);
    const [r] = pass.reconciled[0]!.reconciliations;
    expect(r).toMatchObject({
      status: "compared",
      onlyBlue: 0,
      onlyGreen: 0,
      differing: 0,
      requestedBy: "system:rollout",
    });
    expect(r!.report!.counts.matching).toBeGreaterThan(30);
    expect(r!.report!.notComparable.map((n) => n.what)).toEqual(["measure customers", "measure mean"]);
    // Reconciled just now: the next worker's pass leaves it alone.
    expect((await reconcileRunningRollouts(fx.pool, db, { freshForMs: 60_000 })).skipped).toEqual([NAME]);

    const cr = await requestPromotion(db, owner, { pipeline: NAME, reason: "reconciled clean" });
    expect(cr.impact).toMatchObject({
      reconciliations: [{ output: "", status: "compared", onlyBlue: 0, onlyGreen: 0, differing: 0 }],
      warnings: ["not compared (see the reconciliation for why): measure customers, measure mean"],
    });

    // A newer reconciliation that is not clean (here: one that failed) stops the approval; the request stays pending.
    await storeReconciliation(
      fx.pool,
      { blue: { pipelineVersionId: blueId }, green: { pipelineVersionId: greenId } },
      { actorUserId: null, actor: "system:rollout" },
      { startedAt: new Date(), report: null, error: "the comparison ran longer than the statement timeout" },
    );
    const blocked = await approveChangeRequest(db, operator, { id: cr.id, pipeline: NAME }).catch(
      (e: unknown) => e,
    );
    expect(blocked).toBeInstanceOf(ChangeRequestError);
    expect((blocked as Error).message).toContain(
      "failed: the comparison ran longer than the statement timeout",
    );
    const status = await fx.pool.query(`SELECT status FROM change_requests WHERE id = $1`, [cr.id]);
    expect(status.rows[0]).toEqual({ status: "pending" });
    expect(await serving()).toBe(blueId);

    // So does a newer one that found differences the request did not accept; the approver learns
    // the way on (the requester asks again, accepting them) besides aborting.
    await storeReconciliation(
      fx.pool,
      { blue: { pipelineVersionId: blueId }, green: { pipelineVersionId: greenId } },
      { actorUserId: null, actor: "system:rollout" },
      {
        startedAt: new Date(),
        report: { ...r!.report!, counts: { ...r!.report!.counts, differing: 2 } },
        error: null,
      },
    );
    const differs = await approveChangeRequest(db, operator, { id: cr.id, pipeline: NAME }).catch(
      (e: unknown) => e,
    );
    expect(differs).toBeInstanceOf(ChangeRequestError);
    expect((differs as Error).message).toContain("found 2 keys differ");
    expect((differs as Error).message).toContain(
      `the requester can cancel change request #${cr.id} and ask again, accepting them`,
    );
    expect((blocked as Error).message).not.toContain("ask again, accepting them");
    expect(await serving()).toBe(blueId);

    expect((await reconcileRollout(fx.pool, db, NAME, operator)).reconciliations[0]!.differing).toBe(0);
    const applied = await approveChangeRequest(db, operator, { id: cr.id, pipeline: NAME, note: "clean" });
    expect(applied.status).toBe("applied");
    expect(await serving()).toBe(greenId);
    expect((await readers()).over).toBe(`${TABLE}@v3`);
    expect(await runOf(blueId)).toBe("stopped/stopped");

    // Nothing left to reconcile: refused clearly.
    const after = await reconcileRollout(fx.pool, db, NAME, owner).catch((e: unknown) => e);
    expect(after).toBeInstanceOf(RolloutError);
    expect((after as Error).message).toContain("has no rollout running (rollout #2 is promoted)");
  });
});
