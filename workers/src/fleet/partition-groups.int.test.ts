// Guarantee: a version read in partition groups (source.kafka.parallelism) runs on the workers as one
// chain of batch jobs per group, on several worker processes at once, and stays exactly once when
// workers are SIGKILLed mid-batch — also while two groups commit at once — and across a pause and a
// resume, which settle and restart all groups together (docs/workers.md "Partition groups").
//
// Three worker processes run a ledger in 3 groups, one in 2 groups and windows in 3 groups keyed by
// card country (not the Kafka key: each window is updated by every group) over a 6-partition topic
// (5% duplicates, 1% malformed, 5% out of order), beside a version without groups on the same topic,
// while a producer keeps writing. A random worker is SIGKILLed every few seconds (seeded); half-way
// the 3-group version is paused (it must settle with no group in flight and commit nothing while
// paused) and resumed. Afterwards each sink is audited: every event id once, each group's striped
// batch ids gap-free, every offset read once, each batch equal to its recorded plan; the windows equal
// an uninterrupted single runner's over the same topic.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineRunner, registerPipelineVersion } from "@sluice/engine";
import { ledgerSpec } from "@sluice/engine/testing";
import { Prng } from "@sluice/producer";
import { getPipelineRun, pausePipelineRun, resumePipelineRun } from "@sluice/services";
import { waitFor } from "@sluice/testing";
import { createFleetHarness, fleetRunSummary, type FleetHarness } from "../testing/fleet-harness";
import { auditFleet, startFleet, startProducers, waitFleetCaughtUp } from "../testing/pipeline-fleet";
import { startWorkerKiller } from "../testing/worker-killer";
import { isStarted, type WorkerProcess } from "../testing/worker-process";

const CHAOS_MS = Number(process.env.SLUICE_GROUPS_CHAOS_MS ?? 40_000);
const WORKERS = 3;
const actor = { actor: "user:test@sluice.local" };

/** 1-minute windows per card country (update mode): every partition, so every group, updates each one. */
const windowsByCountry = (table: string) => ({
  eventTime: { column: "event_time", watermarkDelay: "2m", idleTimeout: "1h" },
  expectations: [],
  transform: { filter: "type in ['settlement', 'refund']" },
  aggregate: {
    window: { tumbling: "1m" },
    groupBy: ["card_country"],
    measures: { settled: "sum(amount)", events: "count()", customers: "count_distinct(customer_id)" },
    outputMode: "update",
    allowedLateness: "2m",
  },
  sink: { postgres: { table } },
});
const WINDOW_COLUMNS = `card_country, window_start, window_end, settled::text, events::int, customers::int`;

let h: FleetHarness;
beforeAll(async () => {
  // Random kills can hit one group's batch several times in a row; this test is about exactness under
  // crashes, so it lifts the poison-batch limit (run-groups.int.test.ts tests it per group).
  h = await createFleetHarness("groups", {
    extraTopics: 1,
    workerEnv: { WORKER_MAX_UNFINISHED_ATTEMPTS: "100" },
  });
});
afterAll(async () => {
  await h?.close();
});

describe("partition groups on the workers", () => {
  it(
    "3 workers run a version's groups at once; SIGKILLs, a pause and a resume: every sink ends exactly once",
    { timeout: CHAOS_MS + 300_000 },
    async () => {
      const topic = h.topics[1]!;
      const producers = await startProducers(h.fx.kafka, [
        { topic, seed: 303, backlog: 6000, ratePerSecond: 150, partitions: 6 },
      ]);
      const workers: WorkerProcess[] = Array.from({ length: WORKERS }, () => h.spawnWorker());
      await Promise.all(workers.map((w) => w.waitForLog(isStarted)));
      const fleet = await startFleet(h.fx.pool, h.db, h.queue, [
        { name: "groups-three", topic, maxOffsetsPerTrigger: 300, every: "500ms", parallelism: 3 },
        { name: "groups-two", topic, maxOffsetsPerTrigger: 500, every: "1s", parallelism: 2 },
        { name: "groups-none", topic, maxOffsetsPerTrigger: 700, every: "1s" },
        {
          name: "groups-windows",
          topic,
          maxOffsetsPerTrigger: 400,
          every: "1s",
          parallelism: 3,
          overrides: windowsByCountry("groups_windows"),
        },
      ]);
      const ledgers = fleet.filter((p) => p.name !== "groups-windows");
      const three = fleet[0]!;

      // How many of the 3-group version's groups had a batch in flight at once, on how many workers.
      let sampling = true;
      let most = { groups: 0, workers: 0 };
      const sampler = (async () => {
        while (sampling) {
          const r = await h.fx.pool.query<{ groups: number; workers: number }>(
            `SELECT count(*)::int AS groups, count(DISTINCT batch_worker_id)::int AS workers FROM pipeline_run_groups
              WHERE pipeline_version_id = $1 AND batch_started_at IS NOT NULL`,
            [three.pipelineVersionId],
          );
          const now = r.rows[0]!;
          if (now.workers > most.workers || (now.workers === most.workers && now.groups > most.groups))
            most = now;
          await sleep(50);
        }
      })();

      const rng = Prng.from("partition-groups-chaos-1");
      let killer = startWorkerKiller(workers, () => h.spawnWorker(), rng);
      await sleep(CHAOS_MS / 2);
      let kills = await killer.stop();

      // Pause: settles once no group has a batch in flight; then nothing commits until the resume.
      await pausePipelineRun(h.db, { pipelineVersionId: three.pipelineVersionId, ...actor });
      await waitFor(
        "the 3-group version to settle paused",
        async () => (await getPipelineRun(h.db, three.pipelineVersionId))?.phase === "paused",
        60_000,
        200,
      );
      const paused = await getPipelineRun(h.db, three.pipelineVersionId);
      expect(paused?.groups.map((g) => g.inFlight)).toEqual([null, null, null]);
      const lastBatch = async () =>
        (
          await h.fx.pool.query<{ n: string | null }>(
            `SELECT max(batch_id)::text AS n FROM batch_log WHERE pipeline_version_id = $1`,
            [three.pipelineVersionId],
          )
        ).rows[0]!.n;
      const atPause = await lastBatch();
      await sleep(3000);
      expect(await lastBatch()).toBe(atPause);
      await resumePipelineRun(
        h.db,
        { pipelineVersionId: three.pipelineVersionId, ...actor },
        { scheduler: h.queue },
      );

      killer = startWorkerKiller(workers, () => h.spawnWorker(), rng);
      await sleep(CHAOS_MS / 2);
      kills += await killer.stop();
      const manifests = await producers.stop();
      await waitFleetCaughtUp(h.fx.pool, h.fx.kafka, fleet, 240_000);
      sampling = false;
      await sampler;

      expect((await fleetRunSummary(h.db)).failed).toEqual([]);
      const audit = await auditFleet(h.fx.pool, h.fx.kafka, ledgers, manifests);
      const windows = await windowsAgainstOneRunner(topic);
      // Every group of each grouped version committed batches of its own.
      const groupsSeen = await h.fx.pool.query<{ name: string; groups: number[] }>(
        `SELECT p.name, array_agg(DISTINCT (b.progress->'group'->>'no')::int ORDER BY (b.progress->'group'->>'no')::int) AS groups
           FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id
          WHERE b.progress ? 'group' GROUP BY p.name ORDER BY p.name`,
      );
      expect(groupsSeen.rows).toEqual([
        { name: "groups-three", groups: [0, 1, 2] },
        { name: "groups-two", groups: [0, 1] },
        { name: "groups-windows", groups: [0, 1, 2] },
      ]);
      expect(most.workers).toBeGreaterThanOrEqual(2);
      const messages = [...manifests.values()].reduce((s, m) => s + m.counts.messages, 0);
      console.log(
        `[groups] ${kills} SIGKILLs; ${messages} messages on 6 partitions; ${audit.batches} committed batches over 3 versions, ` +
          `${audit.replayed} re-ran a recorded plan; at most ${most.groups} groups of one version in flight at once on ${most.workers} workers; ` +
          `paused at batch ${atPause} with no group in flight, resumed; every ledger exact, ${windows} windows in 3 groups equal to one runner's`,
      );
      expect(kills).toBeGreaterThanOrEqual(Math.floor(CHAOS_MS / 5000));
    },
  );
});

/** The grouped windows, against the same spec drained by one uninterrupted runner; returns the window count. */
async function windowsAgainstOneRunner(topic: string): Promise<number> {
  const spec = ledgerSpec(topic, {
    name: "groups-windows-reference",
    source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 2000 } },
    ...windowsByCountry("groups_windows_reference"),
  });
  const { pipelineVersionId } = await registerPipelineVersion(h.fx.pool, spec);
  const runner = await PipelineRunner.open(h.fx.resources, { pipelineVersionId, spec, owner: "reference" });
  try {
    while ((await runner.runBatch()).kind === "committed");
  } finally {
    await runner.close();
  }
  const read = (table: string) =>
    h.fx.pool.query(`SELECT ${WINDOW_COLUMNS} FROM ${table} ORDER BY window_start, card_country`);
  const [grouped, reference] = await Promise.all([read("groups_windows"), read("groups_windows_reference")]);
  expect(grouped.rows.length).toBeGreaterThan(10);
  expect(grouped.rows).toEqual(reference.rows);
  return grouped.rows.length;
}
