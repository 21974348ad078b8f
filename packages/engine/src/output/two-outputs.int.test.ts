// Several outputs from one read (issue #23 "Prove it"): one pipeline splits adversarial payments —
// duplicates, out-of-order and late events over three partitions — into a fraud view (5-minute windows
// upserted as they change, 1 minute of lateness) and a finance output (its own watermark delay, 4
// minutes of lateness, each window written once when final). Each output equals its own SQL
// recomputation over the raw events (which rows were late for which output follows from the batches'
// offset ranges); a row late for one output still counts in the other. Then the same pipeline under
// SIGKILLs at random moments equals the uninterrupted run, and a SIGKILL while the commit has written
// one output and waits to write the other leaves neither: all outputs commit a batch, or none does.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { producePayments } from "@sluice/producer";
import { totalOutcomes } from "../batch/outcomes";
import { PipelineRunner } from "../runner/pipeline-runner";
import type { BatchProgress } from "../store/progress-record";
import { registerPipelineVersion } from "../store/register-version";
import { batchLog, createEngineFixture, drainPipeline, type EngineFixture } from "../testing/engine-fixture";
import { finishRun, runWithKills } from "../testing/kill-loop";
import { loadReferenceBatches, loadReferenceEvents } from "../testing/reference-events";
import { EXPECTED_MEASURES, settlementsWorkload, settlementViewsSpec } from "../testing/settlements";
import { specDir, spawnSluice } from "../testing/sluice-process";

let fx: EngineFixture;
let specs: Awaited<ReturnType<typeof specDir>>;

const FRAUD = { delay: 2, lateness: 1 };
const FINANCE = { delay: 3, lateness: 4 };

const splitSpec = (name: string, fraudTable: string, financeTable: string) =>
  settlementViewsSpec(fx.topic, name, { fraudTable, financeTable, fraud: FRAUD, finance: FINANCE });

/**
 * Every raw event with the batch that read it and each output's watermark before that batch, from
 * the raw events and the offset ranges alone: per partition the max event time read up to the batch,
 * the minimum over partitions, never moving back, minus each output's own delay.
 */
const JUDGED = `
  ends AS (
    SELECT b.batch_id, p.partition, max(b2."to") AS end_offset
      FROM (SELECT DISTINCT batch_id FROM ref_batches) b CROSS JOIN (SELECT DISTINCT partition FROM ref_batches) p
      JOIN ref_batches b2 ON b2.partition = p.partition AND b2.batch_id <= b.batch_id GROUP BY 1, 2),
  source_time AS (
    SELECT batch_id, max(m) OVER (ORDER BY batch_id) AS t
      FROM (SELECT e.batch_id, min(mx) AS m FROM (SELECT e.batch_id, e.partition, max(r.event_time) AS mx
              FROM ends e JOIN ref_events r ON r.partition = e.partition AND r."offset" < e.end_offset GROUP BY 1, 2) e GROUP BY 1) x),
  judged AS (
    SELECT r.*, b.batch_id,
           r.event_time < st.t - interval '${FRAUD.delay + FRAUD.lateness} minutes' AS late_fraud,
           r.event_time < st.t - interval '${FINANCE.delay + FINANCE.lateness} minutes' AS late_finance
      FROM ref_events r JOIN ref_batches b ON b.partition = r.partition AND r."offset" >= b."from" AND r."offset" < b."to"
      LEFT JOIN source_time st ON st.batch_id = b.batch_id - 1
     WHERE r.type IN ('settlement', 'refund')),
  -- The shared phases: a row late for every output is the pipeline's late; dedup keeps the first other occurrence.
  admitted AS (SELECT DISTINCT ON (event_id) * FROM judged WHERE NOT coalesce(late_fraud AND late_finance, false)
               ORDER BY event_id, batch_id)`;

const window5m = `to_timestamp(floor(extract(epoch FROM event_time) / 300) * 300)`;
const COLUMNS = `merchant_id, window_start, window_end, settled::text, refunded::text, events::int, customers::int, largest::text, mean::text`;

function expectedFraud() {
  return fx.pool.query(
    `WITH ${JUDGED}
     SELECT merchant_id, ${window5m} AS window_start, ${window5m} + interval '5 minutes' AS window_end, ${EXPECTED_MEASURES}
       FROM admitted WHERE NOT coalesce(late_fraud, false) GROUP BY 1, 2, 3 ORDER BY 2, 1`,
  );
}

function expectedFinance(finalWatermark: string) {
  return fx.pool.query(
    `WITH ${JUDGED}
     SELECT merchant_id, ${window5m} AS window_start, ${window5m} + interval '5 minutes' AS window_end, ${EXPECTED_MEASURES}
       FROM admitted WHERE NOT coalesce(late_finance, false) GROUP BY 1, 2, 3
     HAVING ${window5m} + interval '${5 + FINANCE.lateness} minutes' <= $1::timestamptz ORDER BY 2, 1`,
    [finalWatermark],
  );
}

const rowsOf = async (table: string) =>
  (await fx.pool.query(`SELECT ${COLUMNS} FROM ${table} ORDER BY window_start, merchant_id`)).rows;

const sumOutput = (
  progress: BatchProgress[],
  name: string,
  f: (o: NonNullable<BatchProgress["outputs"]>[number]) => number,
) => progress.reduce((s, p) => s + f(p.outputs!.find((o) => o.name === name)!), 0);

beforeAll(async () => {
  fx = await createEngineFixture("two-outputs");
  specs = await specDir();
  await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    ...settlementsWorkload(2323),
    log: () => undefined,
  });
  await loadReferenceEvents(fx.pool, fx.kafka, fx.topic);
});
afterAll(async () => {
  await specs?.cleanup();
  await fx?.close();
});

describe("two outputs with different lateness from one read", () => {
  let reference: { pipelineVersionId: string; progress: BatchProgress[] };

  it(
    "each output equals its own recomputation; a row late for the fraud view still counts in finance",
    { timeout: 180_000 },
    async () => {
      reference = await drainPipeline(fx, splitSpec("split-reference", "fraud_ref", "finance_ref"));
      const { pipelineVersionId, progress } = reference;
      await loadReferenceBatches(fx.pool, [pipelineVersionId]);

      const fraud = await rowsOf("fraud_ref");
      expect(fraud.length).toBeGreaterThan(50);
      expect(fraud).toEqual((await expectedFraud()).rows);
      const financeWatermark = progress.at(-1)!.outputs!.find((o) => o.name === "finance")!.watermark!;
      const finance = await rowsOf("finance_ref");
      expect(finance.length).toBeGreaterThan(40);
      expect(finance).toEqual((await expectedFinance(financeWatermark)).rows);

      // Late per output, exactly as recomputed; the pipeline's own `late` only for rows late for both.
      const late = await fx.pool.query<{ fraud_only: number; both: number; finance_only: number }>(
        `WITH ${JUDGED},
       front AS (SELECT DISTINCT ON (event_id) * FROM judged ORDER BY event_id, batch_id)
       SELECT (SELECT count(*)::int FROM admitted WHERE late_fraud AND NOT late_finance) AS fraud_only,
              (SELECT count(*)::int FROM admitted WHERE late_finance AND NOT late_fraud) AS finance_only,
              (SELECT count(*)::int FROM judged WHERE late_fraud AND late_finance) AS both`,
      );
      const { fraud_only, finance_only, both } = late.rows[0]!;
      expect(fraud_only).toBeGreaterThan(10);
      expect(both).toBeGreaterThan(5);
      expect(sumOutput(progress, "fraud", (o) => o.outcomes.late)).toBe(fraud_only);
      expect(sumOutput(progress, "finance", (o) => o.outcomes.late)).toBe(finance_only);
      expect(progress.reduce((s, p) => s + p.outcomes.late, 0)).toBe(both);
      const deadLate = await fx.pool.query(
        `SELECT count(*)::int AS n FROM dead_letters WHERE pipeline_version_id = $1 AND outcome = 'late'`,
        [pipelineVersionId],
      );
      expect(deadLate.rows[0]!.n).toBe(both);

      // Every batch balances at the source and in each output; the state size is the outputs' plus dedup.
      for (const p of progress) {
        expect(totalOutcomes(p.outcomes)).toBe(p.inputRows);
        for (const o of p.outputs!) {
          const { rows, sink, filtered, late: l, duplicate, stale, deadLetter, dropped } = o.outcomes;
          expect(
            sink +
              filtered +
              l +
              duplicate +
              stale +
              deadLetter +
              Object.values(dropped).reduce((a, b) => a + b, 0),
          ).toBe(rows);
          expect(rows).toBe(p.outcomes.sink);
        }
      }
      const windows = await fx.pool.query<{ output: string; n: number; bytes: number }>(
        `SELECT output, count(*)::int AS n, sum(bytes)::int AS bytes FROM window_state WHERE pipeline_version_id = $1 GROUP BY 1 ORDER BY 1`,
        [pipelineVersionId],
      );
      const last = progress.at(-1)!;
      expect(windows.rows.map((w) => [w.output, w.n, w.bytes])).toEqual(
        last.outputs!.map((o) => [o.name, o.stateRows, o.stateBytes]).filter(([, n]) => n !== 0),
      );
      const checkpoint = await fx.pool.query(
        `SELECT outputs FROM checkpoints WHERE pipeline_version_id = $1`,
        [pipelineVersionId],
      );
      expect(Object.keys(checkpoint.rows[0]!.outputs).sort()).toEqual(["finance", "fraud"]);
    },
  );

  it(
    "SIGKILLed at random moments, both outputs equal the uninterrupted run's",
    { timeout: 300_000 },
    async () => {
      const spec = splitSpec("split-kills", "fraud_kills", "finance_kills");
      const file = await specs.write("split-kills", spec as unknown as Record<string, unknown>);
      const run = await runWithKills(file, fx.db.url, { kills: 6, seed: "two-outputs" });
      expect(await rowsOf("fraud_kills")).toEqual(await rowsOf("fraud_ref"));
      expect(await rowsOf("finance_kills")).toEqual(await rowsOf("finance_ref"));
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
      const log = await batchLog(fx.pool, pipelineVersionId);
      expect(log.map((b) => b.batchId)).toEqual(log.map((_, i) => i));
      const refLog = await batchLog(fx.pool, reference.pipelineVersionId);
      const decisions = (b: (typeof log)[number]) => [
        b.outcomes,
        (b.progress.outputs as { name: string; outcomes: unknown; watermark: unknown }[]).map((o) => [
          o.name,
          o.outcomes,
          o.watermark,
        ]),
      ];
      expect(log.map(decisions)).toEqual(refLog.map(decisions));
      console.log(`two outputs under kills: ${JSON.stringify({ ...run, batches: log.length })}`);
      expect(run.kills).toBeGreaterThanOrEqual(4);
    },
  );

  it(
    "a SIGKILL inside the commit, after one output's rows and before the other's, commits neither",
    { timeout: 180_000 },
    async () => {
      const spec = splitSpec("split-commit-kill", "fraud_ck", "finance_ck");
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
      const runner = await PipelineRunner.open(fx.resources, {
        pipelineVersionId,
        spec,
        owner: "first-batches",
      });
      try {
        for (let i = 0; i < 4; i++) await runner.runBatch();
      } finally {
        await runner.close();
      }
      const snapshot = async () => ({
        finance: await rowsOf("finance_ck"),
        fraud: await rowsOf("fraud_ck"),
        checkpoint: (
          await fx.pool.query(
            `SELECT last_batch_id, outputs, state_rows FROM checkpoints WHERE pipeline_version_id = $1`,
            [pipelineVersionId],
          )
        ).rows[0],
        windows: (
          await fx.pool.query(
            `SELECT output, count(*)::int AS n FROM window_state WHERE pipeline_version_id = $1 GROUP BY 1 ORDER BY 1`,
            [pipelineVersionId],
          )
        ).rows,
      });
      const before = await snapshot();

      // Outputs write in name order, finance before fraud: hold the fraud table (the version's physical
      // table; fraud_ck is its serving view) so the commit stops there.
      const physical = (
        await fx.pool.query<{ t: string }>(
          `SELECT sink_tables ->> 'public.fraud_ck' AS t FROM pipeline_versions WHERE id = $1`,
          [pipelineVersionId],
        )
      ).rows[0]!.t;
      const fraudInsert = `INSERT INTO "sluice_sinks"."${physical}"%`;
      const blocker = new pg.Client({ connectionString: fx.db.url });
      await blocker.connect();
      await blocker.query("BEGIN");
      await blocker.query(`LOCK TABLE sluice_sinks."${physical}" IN ACCESS EXCLUSIVE MODE`);
      try {
        const child = spawnSluice(
          [
            "run",
            await specs.write("split-ck", spec as unknown as Record<string, unknown>),
            "--until-caught-up",
          ],
          {
            databaseUrl: fx.db.url,
          },
        );
        for (;;) {
          const waiting = await fx.pool.query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
            [fraudInsert],
          );
          if (waiting.rowCount) break;
          const exited = await Promise.race([
            child.exited,
            new Promise((r) => setTimeout(() => r(null), 100)),
          ]);
          if (exited) throw new Error(`the runner exited before its commit: ${child.stderr.join("\n")}`);
        }
        // The transaction has written both outputs' window state and finance's rows by now: kill it there.
        const inFlight = await fx.pool.query(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
          WHERE c.relname = 'window_state' AND l.mode = 'RowExclusiveLock' AND l.granted`,
        );
        expect(inFlight.rows[0]!.n).toBeGreaterThan(0);
        child.child.kill("SIGKILL");
        expect((await child.exited).signal).toBe("SIGKILL");
      } finally {
        await blocker.query("ROLLBACK");
        await blocker.end();
      }
      for (;;) {
        const left = await fx.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE query LIKE $1 AND state <> 'idle'`,
          [fraudInsert],
        );
        if (!left.rowCount) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await snapshot()).toEqual(before);

      // The re-run commits the planned batch once, and the rest: both outputs equal the reference.
      await finishRun(
        await specs.write("split-ck-finish", spec as unknown as Record<string, unknown>),
        fx.db.url,
      );
      expect(await rowsOf("fraud_ck")).toEqual(await rowsOf("fraud_ref"));
      expect(await rowsOf("finance_ck")).toEqual(await rowsOf("finance_ref"));
    },
  );
});
