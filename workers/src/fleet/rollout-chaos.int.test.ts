// Guarantee: a blue/green rollout and its promotion survive processes dying at any instant. Blue
// (serving) and green (a candidate from the earliest offsets, its own checkpoint and table) run side by
// side on two worker processes while a producer keeps writing; every few seconds (seeded) a worker is
// SIGKILLed and a new one started. Still under the kills and the input, the promotion: reconciled
// clean, requested, its approving process SIGKILLed inside the transaction (nothing of it shows: blue
// serves, the request is pending, no promotion audited), then approved twice at once — applied once.
// Afterwards green holds every produced event id exactly once with batches that tile the topic
// (auditExactlyOnce, against the producer's manifest), blue — fenced mid-stream — exactly the events
// below the offsets it committed (recomputed in SQL from green's table) and nothing after the switch,
// and the workers' periodic reconciliation ran (as system:rollout) despite the kills.
// Duration: SLUICE_CHAOS_MS (default 30 s of kills before the promotion, 8 s after).
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerSpec } from "@sluice/engine/testing";
import { Prng } from "@sluice/producer";
import {
  approveChangeRequest,
  kafkaTopicOffsets,
  reconcileRollout,
  requestPromotion,
  startRollout,
  type TAuditWho,
} from "@sluice/services";
import { createFleetHarness, fleetRunSummary, type FleetHarness } from "../testing/fleet-harness";
import {
  auditFleet,
  startFleet,
  startProducers,
  waitFleetCaughtUp,
  type FleetPipeline,
} from "../testing/pipeline-fleet";
import { approveAndKillBeforeCommit } from "../testing/kill-approval";
import { startWorkerKiller } from "../testing/worker-killer";
import { isStarted, type WorkerProcess } from "../testing/worker-process";

const CHAOS_MS = Number(process.env.SLUICE_CHAOS_MS ?? 30_000);
const WORKERS = 2;
const NAME = "rollout-chaos";
const who = { actorUserId: null, actor: "owner@sluice.local", from: { origin: "cli" as const } };

let h: FleetHarness;
let approver: TAuditWho;
/** A version's committed offsets and batch count: unchanged once it is fenced. */
const committed = async (pipelineVersionId: string) =>
  (
    await h.fx.pool.query<{ ends: unknown; batches: number }>(
      `SELECT end_offsets AS ends, (SELECT count(*)::int FROM batch_log b WHERE b.pipeline_version_id = $1) AS batches
         FROM checkpoints WHERE pipeline_version_id = $1`,
      [pipelineVersionId],
    )
  ).rows[0];
const servingId = async () =>
  (
    await h.fx.pool.query<{ id: string }>(`SELECT serving_version_id AS id FROM pipelines WHERE name = $1`, [
      NAME,
    ])
  ).rows[0]!.id;
beforeAll(async () => {
  // As in sigkill-chaos.int.test.ts: random kills may hit one batch repeatedly; exactness is the point here.
  h = await createFleetHarness("rollout_chaos", {
    extraTopics: 0,
    workerEnv: { WORKER_MAX_UNFINISHED_ATTEMPTS: "100", WORKER_ROLLOUT_RECONCILE_INTERVAL_MS: "3000" },
  });
  const user = await h.db.user.create({
    data: { email: "abe.approver@sluice.local", name: "Abe", role: "operator" },
  });
  approver = { actorUserId: user.id, actor: user.email, from: { origin: "web" } };
});
afterAll(async () => {
  await h?.close();
});

describe("rollout chaos", () => {
  it(
    `blue and green side by side, a worker SIGKILLed every few seconds for ${CHAOS_MS / 1000} s, then the promotion in the chaos with its approver killed once: promoted once, green exact, blue exact up to where it stopped`,
    { timeout: CHAOS_MS + 300_000 },
    async () => {
      const topic = h.topics[0]!;
      const producers = await startProducers(h.fx.kafka, [
        { topic, seed: 303, backlog: 3000, ratePerSecond: 80 },
      ]);
      const workers: WorkerProcess[] = Array.from({ length: WORKERS }, () => h.spawnWorker());
      await Promise.all(workers.map((w) => w.waitForLog(isStarted)));
      const [blue] = await startFleet(h.fx.pool, h.db, h.queue, [
        { name: NAME, topic, maxOffsetsPerTrigger: 400, every: "500ms" },
      ]);
      // Green: the same results (a new description is a new version), in its own table from the earliest offsets.
      const blueSpec = ledgerSpec(topic, {
        name: NAME,
        source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 400 } },
        sink: { postgres: { table: blue!.table } },
        trigger: { every: "500ms" },
      });
      const started = await startRollout(
        h.db,
        kafkaTopicOffsets(h.fx.kafka),
        who,
        { ...blueSpec, description: "candidate with the same results" },
        { from: { kind: "earliest" }, reason: "chaos" },
        { scheduler: h.queue },
      );
      const greenId = started.green.pipelineVersionId;
      // auditExactlyOnce reads an unqualified table: green's physical one through a view of the test's own.
      await h.fx.pool.query(`CREATE VIEW green_audit AS SELECT * FROM sluice_sinks."${blue!.table}@v2"`);
      const green: FleetPipeline = {
        ...blue!,
        name: `${NAME}-green`,
        table: "green_audit",
        pipelineVersionId: greenId,
      };

      // A worker SIGKILLed every 2–5 s (seeded) and a new one started, until stopped.
      const killer = startWorkerKiller(workers, () => h.spawnWorker(), Prng.from("rollout-chaos-1"));
      await sleep(CHAOS_MS);

      // Inside the chaos, with input still arriving: the promotion. Its approving process is killed
      // inside the transaction first — nothing of it may show — then another approves it, twice.
      const reconciled = await reconcileRollout(h.fx.pool, h.db, NAME, who);
      expect(reconciled.reconciliations).toMatchObject([
        { status: "compared", onlyBlue: 0, onlyGreen: 0, differing: 0 },
      ]);
      const cr = await requestPromotion(h.db, who, { pipeline: NAME, reason: "chaos: green reconciled" });
      await approveAndKillBeforeCommit({
        databaseUrl: h.fx.db.url,
        pool: h.fx.pool,
        changeRequestId: cr.id,
        pipeline: NAME,
        approver,
      });
      expect(await servingId()).toBe(blue!.pipelineVersionId);
      expect(await h.db.changeRequest.findUniqueOrThrow({ where: { id: BigInt(cr.id) } })).toMatchObject({
        status: "pending",
      });
      expect(await h.db.rollout.findFirstOrThrow({ select: { state: true } })).toEqual({ state: "running" });
      expect(await h.db.auditEvent.count({ where: { action: "rollout.promote" } })).toBe(0);
      const [first, second] = await Promise.all([
        approveChangeRequest(h.db, approver, { id: cr.id, pipeline: NAME, note: "chaos" }),
        approveChangeRequest(h.db, approver, { id: cr.id, pipeline: NAME, note: "chaos" }),
      ]);
      expect([first.status, second.status]).toEqual(["applied", "applied"]);
      expect(await servingId()).toBe(greenId);
      expect(await h.db.auditEvent.count({ where: { action: "rollout.promote" } })).toBe(1);
      const stoppedAt = await committed(blue!.pipelineVersionId);

      // Green serves on under the kills, then everything drains.
      await sleep(8000);
      const kills = await killer.stop();
      const manifests = await producers.stop();
      await waitFleetCaughtUp(h.fx.pool, h.fx.kafka, [green], 240_000);
      expect((await fleetRunSummary(h.db)).failed).toEqual([]);

      // Green: every produced event exactly once, its batches tiling the whole topic.
      await auditFleet(h.fx.pool, h.fx.kafka, [green], manifests);
      // Blue, stopped by the promotion mid-stream and fenced: exactly the events below its committed
      // offsets — recomputed from green's exact table — once each, and no batch after the switch.
      expect(await committed(blue!.pipelineVersionId)).toEqual(stoppedAt);
      await h.fx.pool.query(`CREATE VIEW blue_audit AS SELECT * FROM sluice_sinks."${blue!.table}@v1"`);
      const prefix = await h.fx.pool.query(
        `WITH ends AS (SELECT key::int AS p, value::bigint AS hi FROM checkpoints c, jsonb_each_text(c.end_offsets)
                        WHERE c.pipeline_version_id = $1),
              expected AS (SELECT g.event_id FROM green_audit g JOIN ends e ON e.p = g._partition WHERE g._offset < e.hi)
         SELECT (SELECT count(*) FROM blue_audit)::int AS rows, (SELECT count(DISTINCT event_id) FROM blue_audit)::int AS ids,
                (SELECT count(*) FROM expected)::int AS expected,
                (SELECT count(*) FROM (SELECT event_id FROM blue_audit EXCEPT SELECT event_id FROM expected) x)::int AS extra,
                (SELECT count(*) FROM (SELECT event_id FROM expected EXCEPT SELECT event_id FROM blue_audit) x)::int AS missing`,
        [blue!.pipelineVersionId],
      );
      const { expected } = prefix.rows[0] as { expected: number };
      expect(expected).toBeGreaterThan(0);
      expect(prefix.rows[0]).toEqual({ rows: expected, ids: expected, expected, extra: 0, missing: 0 });
      const byWorkers = await h.fx.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM rollout_reconciliations WHERE requested_by = 'system:rollout'`,
      );
      expect(byWorkers.rows[0]!.n).toBeGreaterThan(0);
      console.log(
        `[rollout chaos] ${kills} SIGKILLs and a killed approval; promoted once; green exact over ${manifests.get(topic)!.eventIds!.size} events, ` +
          `blue exact over the ${expected} below where it stopped; ${byWorkers.rows[0]!.n} reconciliations by the workers`,
      );
      expect(kills).toBeGreaterThanOrEqual(Math.floor(CHAOS_MS / 5000));
    },
  );
});
