// How long a rollout's reconciliation takes on two 1M-row sinks, and what readers of the serving name
// notice of the switch (issue 20, docs/performance.md "Rollouts: reconciliation and the serving switch").
//
//   npm run bench:rollouts -w @sluice/bench
//   npx tsx bench/src/rollout-reconciliation.ts [--rows 1000000] [--keep]
//
// In a scratch database (and an empty topic of its own, for startRollout), two pipelines each in a
// running rollout whose blue and green tables hold N rows with seeded differences (seed-rollout.ts): the
// merchant settlements' windows and the payments ledger.
//
// 1. Reconciliation: the real reconcileRollout, a warm-up and 3 timed runs per pipeline (median), in
//    seconds and rows per second; its counts must equal the seeded differences, or the run fails. Beside
//    it, as baselines: the time to read both tables once, and to hash-join them on the key and count. The
//    comparison statements the real code ran are recorded (capture-queries.ts) and run again under
//    EXPLAIN (ANALYZE, BUFFERS), printed.
// 2. The serving switch: readers query the settlements' serving view in tight loops on connections of
//    their own (serving-readers.ts) while the engine's switchServing moves it between blue and green in a
//    transaction (as apply-promotion.ts and rollbackRollout do), back and forth; then the real promotion
//    (a change request approved by a second person) and rollback. The pause a reader saw (the longest gap
//    between its completed reads spanning a switch) against its gaps outside any switch; every read must
//    be blue's complete result or green's — the one the last committed switch serves — or the run fails.
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import { z } from "zod";
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { createPrismaClient } from "@sluice/db";
import { physicalSql, switchServing } from "@sluice/engine";
import {
  approveChangeRequest,
  reconcileRollout,
  requestPromotion,
  rollbackRollout,
  type TRolloutReconciliation,
} from "@sluice/services";
import { captureQueries, type TCapturedQuery } from "./capture-queries";
import { nodeCpuMs, postgresCpuMs } from "./cpu-usage";
import { fmt } from "./format";
import { median, percentile } from "./percentile";
import { createScratchDatabase } from "./scratch-database";
import { LEDGER, OWNER, PARTITIONS, seedRollout, SETTLEMENTS, type TSeededRollout } from "./seed-rollout";
import { readerGaps, settledAfter, startReader, type TRead, type TSwitchWindow } from "./serving-readers";

const { values } = parseArgs({ options: { rows: { type: "string" }, keep: { type: "boolean" } } });
const opts = z
  .object({
    rows: z.coerce.number().int().min(10_000).default(1_000_000),
    keep: z.boolean().default(false),
  })
  .parse({ rows: values.rows, keep: values.keep });
const RUNS = 3;
const OPERATOR = {
  actorUserId: "bench-operator",
  actor: "operator@bench.local",
  from: { origin: "cli" as const },
};

type TServingRead = { n: number; first: string | null; last: string | null; total: string };

/** What a reader of the settlements asks: one merchant's windows (an index lookup), or the whole result. */
const READERS = {
  point: (table: string) =>
    `SELECT count(*)::int AS n, min(_pipeline_version) AS first, max(_pipeline_version) AS last, coalesce(sum(settled), 0)::text AS total FROM ${table} WHERE merchant_id = 'm-00042'`,
  full: (table: string) =>
    `SELECT count(*)::int AS n, min(_pipeline_version) AS first, max(_pipeline_version) AS last, coalesce(sum(settled), 0)::text AS total FROM ${table}`,
};
type TReaderKind = keyof typeof READERS;

const env = loadEnv(ZServiceEnv);
const kafka = new Kafka({ brokers: env.KAFKA_BROKERS, clientId: "sluice-bench", logLevel: logLevel.NOTHING });
const topic = `bench_rollouts_${Date.now().toString(36)}`;
const scratch = await createScratchDatabase(env.DATABASE_URL);
const db = createPrismaClient(scratch.pool);
// The reconciliation's own pool: its comparison statements (comparison-sql.ts) are recorded.
const reconcilePool = new pg.Pool({ connectionString: scratch.url, max: 4, idleTimeoutMillis: 0 });
const comparisons = captureQueries(reconcilePool, (text) => text.startsWith("WITH b AS"));
const admin = kafka.admin();
const load = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} (${PARTITIONS} partitions; 2 cores, other work on the machine counts)`;
const seconds = (ms: number) => (ms / 1000).toFixed(2);

try {
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
  console.log(`${load()}; ${fmt(opts.rows)} rows a table`);
  const seeded: TSeededRollout[] = [];
  for (const shape of [SETTLEMENTS, LEDGER]) {
    const r = await seedRollout(scratch.pool, db, kafka, shape, { topic, rows: opts.rows });
    const sizes = await scratch.pool.query<{ blue: string; green: string }>(
      `SELECT pg_size_pretty(pg_total_relation_size($1)) AS blue, pg_size_pretty(pg_total_relation_size($2)) AS green`,
      [physicalSql(r.blue.physical), physicalSql(r.green.physical)],
    );
    console.log(
      `${r.pipeline}, ${shape.label}: blue ${r.blue.physical} and green ${r.green.physical}, ${fmt(r.rows)} rows each (${sizes.rows[0]!.blue}, ${sizes.rows[0]!.green} with the key index), filled in ${seconds(r.fillMs)} s; seeded ${fmt(r.expected.onlyBlue)} keys only in blue, ${fmt(r.expected.onlyGreen)} only in green, ${fmt(r.expected.differing)} differing`,
    );
    seeded.push(r);
  }
  for (const r of seeded) await benchReconciliation(r);
  await benchSwitch(seeded[0]!);
} finally {
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
  await reconcilePool.end();
  await db.$disconnect().catch(() => undefined);
  await scratch.close({ keep: opts.keep });
  if (opts.keep) console.log(`kept ${scratch.url}`);
}

async function benchReconciliation(r: TSeededRollout): Promise<void> {
  console.log(`\n── ${r.pipeline}: reconcileRollout, a warm-up and ${RUNS} runs (${load()})`);
  const runs: { ms: number; summaryMs: number; samplesMs: number; nodeMs: number; pgMs: number | null }[] =
    [];
  let statements: TCapturedQuery[] = [];
  for (let i = 0; i <= RUNS; i++) {
    comparisons.length = 0;
    const [node0, pg0] = [nodeCpuMs(), await postgresCpuMs(scratch.pool)];
    const started = performance.now();
    const done = await reconcileRollout(reconcilePool, db, r.pipeline, OWNER);
    const ms = performance.now() - started;
    const [node1, pg1] = [nodeCpuMs(), await postgresCpuMs(scratch.pool)];
    checkCounts(done, r);
    // comparison-sql.ts: the counts, then the samples (the one with the materialized differences).
    const [summary, samples] = comparisons;
    if (comparisons.length !== 2 || !summary || !samples || !samples.text.includes("x AS MATERIALIZED"))
      throw new Error(
        `expected the comparison's two statements (counts, samples), recorded ${comparisons.length}: has comparison-sql.ts changed?`,
      );
    statements = [summary, samples];
    const pgMs = pg0 === null || pg1 === null ? null : pg1 - pg0;
    console.log(
      `${i === 0 ? "warm-up" : `run ${i}`}: ${seconds(ms)} s (counts ${seconds(summary.ms)} s, samples ${seconds(samples.ms)} s), CPU node ${fmt(node1 - node0)} + postgres ${pgMs === null ? "n/a" : fmt(pgMs)} ms`,
    );
    if (i > 0) runs.push({ ms, summaryMs: summary.ms, samplesMs: samples.ms, nodeMs: node1 - node0, pgMs });
  }
  const ms = median(runs.map((x) => x.ms));
  const rows = 2 * r.rows;
  console.log(
    `reconciliation: median ${seconds(ms)} s = ${fmt((rows * 1000) / ms)} rows/s (both tables' ${fmt(rows)} rows); counts query ${seconds(median(runs.map((x) => x.summaryMs)))} s, samples query ${seconds(median(runs.map((x) => x.samplesMs)))} s; found exactly the seeded differences every run`,
  );

  const [blue, green] = [r.blue.physical, r.green.physical].map(physicalSql);
  const key = r.key.map((c) => `"${c}"`).join(", ");
  const scan = await timeBaseline([`SELECT count(*) FROM ${blue}`, `SELECT count(*) FROM ${green}`]);
  const joined = await timeBaseline([`SELECT count(*) FROM ${blue} b FULL JOIN ${green} g USING (${key})`]);
  console.log(
    `baseline, both tables read once (a sequential scan of each): median ${seconds(scan)} s → the reconciliation takes ${(ms / scan).toFixed(1)}× that`,
  );
  console.log(
    `baseline, the two tables hash-full-joined on ${r.key.join(", ")}, only counted: median ${seconds(joined)} s → the reconciliation takes ${(ms / joined).toFixed(1)}× that`,
  );
  for (const [label, q] of [
    ["counts", statements[0]!],
    ["samples", statements[1]!],
  ] as const) {
    console.log(
      `\nEXPLAIN (ANALYZE, BUFFERS) of the ${label} statement reconcileRollout ran (comparison-sql.ts):`,
    );
    console.log((await explain(q)).map((line) => `    ${line}`).join("\n"));
  }
}

function checkCounts(done: TRolloutReconciliation, r: TSeededRollout): void {
  const report = done.reconciliations[0]?.report;
  const got = report && {
    status: report.status,
    rows: [report.counts.blue.rows, report.counts.green.rows],
    onlyBlue: report.counts.onlyBlue,
    onlyGreen: report.counts.onlyGreen,
    differing: report.counts.differing,
    matching: report.counts.matching,
    later: report.counts.laterOnOtherSide,
  };
  const want = { status: "compared", rows: [r.rows, r.rows], ...r.expected, later: 0 };
  if (done.reconciliations.length !== 1 || JSON.stringify(got) !== JSON.stringify(want))
    throw new Error(
      `${r.pipeline}: the reconciliation reported ${JSON.stringify(got ?? done.reconciliations)}, but the seeded differences are ${JSON.stringify(want)}`,
    );
}

/**
 * The median time of running the statements one after the other, after a warm-up, reading as the
 * comparison does: the tables' heaps (an index-only scan would skip the compared columns' pages), on
 * one core (Postgres 15 runs a full join in one process), joined by hashing.
 */
async function timeBaseline(sql: string[]): Promise<number> {
  const client = await scratch.pool.connect();
  const runs: number[] = [];
  try {
    await client.query("BEGIN");
    for (const setting of [
      "enable_indexscan",
      "enable_indexonlyscan",
      "enable_bitmapscan",
      "enable_mergejoin",
    ])
      await client.query(`SET LOCAL ${setting} = off`);
    await client.query(`SET LOCAL max_parallel_workers_per_gather = 0`);
    for (let i = 0; i <= RUNS; i++) {
      const started = performance.now();
      for (const text of sql) await client.query(text);
      if (i > 0) runs.push(performance.now() - started);
    }
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
  return median(runs);
}

/** The statement again, under EXPLAIN (ANALYZE, BUFFERS), in a snapshot like the reconciliation's. */
async function explain(q: TCapturedQuery): Promise<string[]> {
  const client = await scratch.pool.connect();
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    await client.query(`SET LOCAL TimeZone = 'UTC'`);
    const res = await client.query<{ "QUERY PLAN": string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${q.text}`,
      q.values,
    );
    return res.rows.map((row) => row["QUERY PLAN"]);
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
}

async function benchSwitch(r: TSeededRollout): Promise<void> {
  const sides = [r.blue, r.green];
  // What each reader must see of each version: the same query on the version's own table.
  const expected = Object.fromEntries(
    await Promise.all(
      (Object.keys(READERS) as TReaderKind[]).map(async (kind) => [
        kind,
        await Promise.all(
          sides.map(
            async (s) =>
              (await scratch.pool.query<TServingRead>(READERS[kind](physicalSql(s.physical)))).rows[0]!,
          ),
        ),
      ]),
    ),
  ) as Record<TReaderKind, TServingRead[]>;
  let serving = 0;
  const flip = async () => {
    const client = await scratch.pool.connect();
    try {
      await client.query("BEGIN");
      await switchServing(client, {
        from: sides[serving]!.pipelineVersionId,
        to: sides[1 - serving]!.pipelineVersionId,
        why: serving === 0 ? "promoted_away" : "rolled_back",
      });
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
    serving = 1 - serving;
  };

  await switchPhase(
    r,
    expected,
    "switchServing in a transaction, 6 switches; two readers of one merchant",
    ["point", "point"],
    Array(6).fill(flip),
  );
  await switchPhase(
    r,
    expected,
    "switchServing in a transaction, 6 switches; one merchant's reader beside a reader of the whole view",
    ["point", "full"],
    Array(6).fill(flip),
  );
  // The real thing: a promotion requested (accepting the seeded differences), approved by a second
  // person — the gate, the runs, the switch and the audit in the approval's one transaction — then rolled back.
  const cr = await requestPromotion(db, OWNER, {
    pipeline: r.pipeline,
    reason: "benchmark",
    acceptDifferences: true,
  });
  await switchPhase(
    r,
    expected,
    "the real promotion (approveChangeRequest), then rollbackRollout; two readers of one merchant",
    ["point", "point"],
    [
      async () => {
        const applied = await approveChangeRequest(db, OPERATOR, {
          id: cr.id,
          pipeline: r.pipeline,
          note: "benchmark",
        });
        if (applied.status !== "applied") throw new Error(`the promotion was not applied: ${applied.status}`);
      },
      () =>
        rollbackRollout(db, OPERATOR, { pipeline: r.pipeline, reason: "benchmark" }).then(() => undefined),
    ],
  );
}

async function switchPhase(
  r: TSeededRollout,
  expected: Record<TReaderKind, TServingRead[]>,
  label: string,
  kinds: TReaderKind[],
  switches: (() => Promise<void>)[],
): Promise<void> {
  console.log(`\n── serving switch: ${label} (${load()})`);
  const readers = await Promise.all(
    kinds.map((k) => startReader<TServingRead>(scratch.url, READERS[k](r.servingName))),
  );
  const windows: TSwitchWindow[] = [];
  await sleep(1500);
  for (const move of switches) {
    const begin = performance.now();
    await move();
    windows.push({ begin, end: performance.now() });
    await sleep(800);
  }
  const reads = await Promise.all(readers.map((x) => x.stop()));
  console.log(
    `switches took ${windows.map((w) => (w.end - w.begin).toFixed(1)).join(", ")} ms (transaction begin → commit returned)`,
  );
  kinds.forEach((kind, i) => {
    checkReads(kind, reads[i]!, windows, expected[kind]);
    const gaps = readerGaps(reads[i]!, windows);
    const pace = median(gaps.outside);
    const pause = Math.max(...gaps.pauses);
    console.log(
      `reader ${i + 1} (${kind === "point" ? "one merchant" : "whole view"}): ${fmt(reads[i]!.length)} reads, all whole and of the version serving; gap between reads outside the switches median ${pace.toFixed(1)} ms, p99 ${percentile(gaps.outside, 0.99).toFixed(1)} ms; longest gap spanning each switch ${gaps.pauses.map((p) => p.toFixed(1)).join(", ")} ms — at most ${pause.toFixed(1)} ms = ${(pause / pace).toFixed(1)}× the median gap`,
    );
  });
}

/**
 * Every read is blue's complete result or green's (count and checksum, one version's rows only), and
 * a read that overlapped no switch is that of the version the last committed switch left serving.
 */
function checkReads(
  kind: TReaderKind,
  reads: TRead<TServingRead>[],
  windows: TSwitchWindow[],
  expected: TServingRead[],
) {
  const same = (a: TServingRead, b: TServingRead) => JSON.stringify(a) === JSON.stringify(b);
  for (const read of reads) {
    const after = settledAfter(read, windows);
    const whole = after === null ? expected : [expected[(after + 1) % 2]!];
    if (!whole.some((e) => same(read.row, e)))
      throw new Error(
        `a ${kind} reader saw ${JSON.stringify(read.row)}, expected ${whole.map((e) => JSON.stringify(e)).join(" or ")} (${after === null ? "during a switch" : `after switch ${after + 1}`})`,
      );
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
