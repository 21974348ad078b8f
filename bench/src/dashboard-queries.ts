// How fast the console's dashboard queries are with a week of history: one pipeline with 300k batches
// (one every 2 s for 7 days) and 49 more with an hour each, 50 in the fleet, plus the workers' offset
// samples (10 s, 1 min and 5 min grains, as the workers write them). Times the fleet query and each
// pipeline-page query over 1 h, 24 h and 7 d (median of 5 after a warm-up), the same 7-day chart
// computed straight from batch_log (the alternative the rollups replace), and what the rollup trigger
// adds to each batch's commit.
//   npx tsx bench/src/dashboard-queries.ts [--batches 302400] [--pipelines 50] [--keep]
//   npx tsx bench/src/dashboard-queries.ts --reuse <database printed by --keep>   (time the queries again, no load)
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import pg from "pg";
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { createPrismaClient } from "@sluice/db";
import {
  bucketRange,
  findFleet,
  findPartitionOffsets,
  findPipelineSeries,
  getPipelineSignals,
} from "@sluice/services";
// The fleet's queries one by one (internal to the services package; a bench may look inside).
import { queryFleetVersions } from "../../packages/services/src/signals/fleet-versions";
import {
  queryOffsetBuckets,
  queryOffsetPoints,
  queryProcessedBuckets,
  queryRangeTotals,
} from "../../packages/services/src/signals/rollup-queries";
import { nodeCpuMs, postgresCpuMs } from "./cpu-usage";
import { fmt } from "./format";
import { databaseUrlFor } from "@sluice/testing";
import { createScratchDatabase } from "./scratch-database";

const { values: args } = parseArgs({
  options: {
    batches: { type: "string", default: "302400" },
    pipelines: { type: "string", default: "50" },
    keep: { type: "boolean", default: false },
    reuse: { type: "string" },
  },
});
const BATCHES = Number(args.batches);
const PIPELINES = Number(args.pipelines);
const SMALL_BATCHES = 1800; // 1 hour at one batch every 2 s: a full fleet sparkline
let END = new Date(Math.floor(Date.now() / 10_000) * 10_000);
const START = new Date(END.getTime() - BATCHES * 2000);

// A progress record shaped and sized like the engine's (3 partitions, 4 expectations, ~1.3 KB).
const PROGRESS_SQL = `jsonb_build_object(
  'batchId', g, 'pipelineVersionId', $1::text, 'timestamp', to_jsonb(t), 'inputRows', 100, 'inputRowsPerSecond', 50, 'processedRowsPerSecond', 900,
  'durationMs', jsonb_build_object('plan', 2, 'read', 30 + g % 7, 'process', 40 + g % 11, 'commit', 35 + g % 13, 'total', 110 + g % 17),
  'sources', jsonb_build_array(
     jsonb_build_object('partition', 0, 'startOffset', g * 34, 'endOffset', g * 34 + 34, 'latestOffset', g * 34 + 40),
     jsonb_build_object('partition', 1, 'startOffset', g * 33, 'endOffset', g * 33 + 33, 'latestOffset', g * 33 + 35),
     jsonb_build_object('partition', 2, 'startOffset', g * 33, 'endOffset', g * 33 + 33, 'latestOffset', g * 33 + 33)),
  'backlog', 8, 'skippedOffsets', '{}'::jsonb, 'watermark', to_jsonb(t - interval '6 hours'), 'eventTimeMax', to_jsonb(t - interval '2 seconds'),
  'stateRows', 200000 + g, 'stateBytes', 9000000 + g * 40,
  'outcomes', jsonb_build_object('sink', 88, 'duplicate', 5, 'filtered', 0, 'quarantined', 2, 'deadLetter', 1, 'late', 2, 'stale', 0, 'dropped', jsonb_build_object('known_type', 2)),
  'expectations', jsonb_build_object('known_type', 2, 'amount_present', 1, 'known_currency', 3, 'card_country_is_iso', g % 3),
  'replayed', false, 'preparedAhead', g % 10 <> 0,
  'partitionEventTime', jsonb_build_array(
     jsonb_build_object('partition', 0, 'eventTimeMax', to_jsonb(t - interval '2 seconds'), 'lastDataAt', to_jsonb(t), 'idle', false),
     jsonb_build_object('partition', 1, 'eventTimeMax', to_jsonb(t - interval '3 seconds'), 'lastDataAt', to_jsonb(t), 'idle', false),
     jsonb_build_object('partition', 2, 'eventTimeMax', to_jsonb(t - interval '9 minutes'), 'lastDataAt', to_jsonb(t - interval '2 minutes'), 'idle', true)),
  'latencyMs', jsonb_build_object('p50', 900 + g % 50, 'p95', 1800 + g % 90, 'p99', 2100 + g % 120, 'max', 2600),
  'ingestTimeMax', to_jsonb(t - interval '300 milliseconds'))`;

const server = loadEnv(ZServiceEnv).DATABASE_URL;
const scratch = args.reuse ? reuseDatabase(server, args.reuse) : await createScratchDatabase(server);
const db = createPrismaClient(scratch.pool);
const versions = Array.from(
  { length: PIPELINES },
  (_, i) => `${i === 0 ? "big-ledger" : `ledger-${String(i).padStart(2, "0")}`}-v1`,
);
try {
  const { pool } = scratch;
  if (args.reuse)
    END = new Date(
      (
        await pool.query<{ end: Date }>(
          `SELECT max(committed_at) AS end FROM batch_log WHERE pipeline_version_id = $1`,
          [versions[0]],
        )
      ).rows[0]!.end.getTime() + 2000,
    );
  else await loadHistory(pool);
  await timeQueries(pool);
} finally {
  await db.$disconnect().catch(() => undefined);
  await scratch.close({ keep: args.keep || !!args.reuse });
  if (args.keep) console.log(`kept ${scratch.url}: --reuse ${new URL(scratch.url).pathname.slice(1)}`);
}

function reuseDatabase(serverUrl: string, name: string) {
  const url = databaseUrlFor(serverUrl, name);
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  return { url, pool, close: async () => void (await pool.end()) };
}

async function loadHistory(pool: pg.Pool): Promise<void> {
  const team = (
    await pool.query<{ id: string }>(
      `INSERT INTO teams (id, slug, name) VALUES ('t1', 'payments-data', 'Payments Data') RETURNING id`,
    )
  ).rows[0]!.id;
  for (let i = 0; i < PIPELINES; i++) {
    const name = i === 0 ? "big-ledger" : `ledger-${String(i).padStart(2, "0")}`;
    await pool.query(`INSERT INTO pipelines (id, name, owner_team_id) VALUES ($1, $1, $2)`, [name, team]);
    const spec = {
      name,
      source: { kafka: { topic: `${name}-topic` } },
      expectations: [
        { name: "known_type", action: "drop" },
        { name: "amount_present", action: "warn" },
      ],
      dedupe: { key: ["event_id"] },
      eventTime: { column: "event_time" },
    };
    await pool.query(
      `INSERT INTO pipeline_versions (id, pipeline_id, version, spec, spec_hash) VALUES ($1, $2, 1, $3, $1)`,
      [`${name}-v1`, name, JSON.stringify(spec)],
    );
    await pool.query(
      `INSERT INTO pipeline_runs (pipeline_version_id, status, desired_state) VALUES ($1, 'running', 'running')`,
      [`${name}-v1`],
    );
    await pool.query(
      `INSERT INTO checkpoints (pipeline_version_id, last_batch_id, end_offsets, event_time_max) VALUES ($1, 0, '{"0": 1, "1": 1, "2": 1}', $2)`,
      [`${name}-v1`, JSON.stringify({ eventTime: END.toISOString() })],
    );
  }

  // History: batch_log without the trigger, then the rollups in one set-based pass (sluice_rebuild_rollups,
  // proven equal to the trigger's rows by the integration tests): folding 480k rows one by one through
  // the trigger takes tens of minutes here. What the trigger costs per commit is measured below.
  await pool.query(`ALTER TABLE batch_log DISABLE TRIGGER batch_log_rollup`);
  const t0 = Date.now();
  const insertBatches = async (pv: string, count: number) => {
    const from = new Date(END.getTime() - count * 2000);
    for (let first = 0; first < count; first += 20_000) {
      const last = Math.min(count, first + 20_000) - 1;
      await pool.query(
        `INSERT INTO batch_log (pipeline_version_id, batch_id, committed_at, input_rows, sink_rows, outcomes, progress)
         SELECT $1, g, t, 100, 88, ${PROGRESS_SQL}->'outcomes', ${PROGRESS_SQL}
           FROM generate_series($2::int, $3::int) g, LATERAL (SELECT $4::timestamptz + g * interval '2 seconds' AS t) x`,
        [pv, first, last, from],
      );
    }
  };
  await insertBatches(versions[0]!, BATCHES);
  for (const pv of versions.slice(1)) await insertBatches(pv, SMALL_BATCHES);
  const loadMs = Date.now() - t0;
  const r0 = Date.now();
  await pool.query(`SELECT sluice_rebuild_rollups()`);
  const rebuildMs = Date.now() - r0;
  await pool.query(
    `INSERT INTO offset_samples (pipeline_version_id, grain_seconds, partition, bucket_start, sampled_at, latest_offset, committed_offset)
     SELECT v.id, g, p, date_bin(g * interval '1 second', b, '2000-01-01'), b + interval '3 seconds', (extract(epoch FROM b - $2::timestamptz) * 17)::bigint + 40, (extract(epoch FROM b - $2::timestamptz) * 17)::bigint
       FROM unnest($1::text[]) WITH ORDINALITY v(id, n), generate_series(0, 2) p, unnest(ARRAY[10, 60, 300]) g,
            generate_series(CASE WHEN v.n = 1 THEN $2::timestamptz ELSE $3::timestamptz - interval '1 hour' END, $3::timestamptz - interval '10 seconds', interval '10 seconds') b
      -- As recordOffsetSamples keeps them: every 10 s; each minute's first; each 5 minutes' newest minute's first.
      WHERE g = 10 OR (g = 60 AND extract(second FROM b) = 0) OR (g = 300 AND extract(second FROM b) = 0 AND extract(minute FROM b)::int % 5 = 4)
     ON CONFLICT DO NOTHING`,
    [versions, START, END],
  );
  await pool.query(`VACUUM ANALYZE batch_log, batch_rollup, partition_rollup, offset_samples`);
  const counts = (
    await pool.query(
      `SELECT (SELECT count(*) FROM batch_log)::int AS batch_log, (SELECT count(*) FROM batch_log WHERE pipeline_version_id = $1)::int AS big,
      (SELECT count(*) FROM batch_rollup)::int AS batch_rollup, (SELECT count(*) FROM batch_rollup WHERE pipeline_version_id = $1)::int AS big_rollup,
      (SELECT count(*) FROM partition_rollup)::int AS partition_rollup, (SELECT count(*) FROM offset_samples)::int AS offset_samples,
      pg_size_pretty(pg_total_relation_size('batch_log')) AS batch_log_size, pg_size_pretty(pg_total_relation_size('batch_rollup') + pg_total_relation_size('partition_rollup')) AS rollup_size`,
      [versions[0]],
    )
  ).rows[0];
  console.log(
    `history: ${fmt(counts.batch_log)} batch_log rows (${fmt(counts.big)} for big-ledger, ${counts.batch_log_size}), loaded in ${fmt(loadMs)} ms; rollups rebuilt in ${fmt(rebuildMs)} ms`,
  );
  console.log(
    `rollups: ${fmt(counts.batch_rollup)} batch_rollup rows (${fmt(counts.big_rollup)} for big-ledger), ${fmt(counts.partition_rollup)} partition_rollup rows (${counts.rollup_size}); ${fmt(counts.offset_samples)} offset samples; ${PIPELINES} pipelines`,
  );
}

async function timeQueries(pool: pg.Pool): Promise<void> {
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} (2 cores; other work on the machine counts)`,
  );

  // Wall time is at the mercy of the machine's other load; CPU time (this process + the database's
  // backends, from /proc) much less, so both are printed.
  const time = async (label: string, fn: () => Promise<unknown>) => {
    await fn();
    const runs: number[] = [];
    const [node0, pg0] = [nodeCpuMs(), await postgresCpuMs(pool)];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await fn();
      runs.push(performance.now() - t);
    }
    const [node1, pg1] = [nodeCpuMs(), await postgresCpuMs(pool)];
    runs.sort((a, b) => a - b);
    const cpu =
      pg0 === null || pg1 === null
        ? "postgres CPU n/a"
        : `CPU node ${((node1 - node0) / 5).toFixed(1)} + postgres ${((pg1 - pg0) / 5).toFixed(1)} ms`;
    console.log(
      `${label.padEnd(52)} median ${runs[2]!.toFixed(1).padStart(7)} ms   (min ${runs[0]!.toFixed(1)}, max ${runs[4]!.toFixed(1)})   ${cpu}`,
    );
  };
  const range = (ms: number) => ({ from: new Date(END.getTime() - ms), to: END });
  await time(`fleet (findFleet, ${PIPELINES} pipelines)`, () => findFleet(db, END));
  for (const [label, ms] of [
    ["1h", 3600_000],
    ["24h", 86_400_000],
    ["7d", 7 * 86_400_000],
  ] as const) {
    await time(`charts ${label} (findPipelineSeries, every chart)`, () =>
      findPipelineSeries(db, { pipeline: "big-ledger", range: range(ms) }),
    );
    await time(`signals + graph ${label} (getPipelineSignals)`, () =>
      getPipelineSignals(db, { pipeline: "big-ledger", range: range(ms) }, END),
    );
  }
  // Where the fleet's time goes: each of its queries alone.
  const spark = bucketRange({ from: new Date(END.getTime() - 3600_000), to: END }, 60);
  await time("  fleet part: rows committed per minute, 1 h", () =>
    queryProcessedBuckets(db, versions, spark),
  );
  await time("  fleet part: offset points summed in SQL, 1 h", () => queryOffsetPoints(db, versions, spark));
  await time("  (per partition, as the pipeline page reads them)", () =>
    queryOffsetBuckets(db, versions, spark),
  );
  await time("  fleet part: range totals, last hour", () =>
    queryRangeTotals(db, versions, new Date(END.getTime() - 3600_000), END),
  );
  await time("  fleet part: pipelines and runs, one statement", () => queryFleetVersions(db));
  await time("  (the same through Prisma's nested findMany)", () =>
    db.pipeline.findMany({
      select: {
        name: true,
        versions: {
          take: 1,
          orderBy: { version: "desc" },
          select: { id: true, spec: true, run: true, checkpoint: { select: { eventTimeMax: true } } },
        },
      },
    }),
  );
  await time("checkpoint offsets (findPartitionOffsets)", () =>
    findPartitionOffsets(db, { pipeline: "big-ledger" }, END),
  );
  // The alternative the rollups replace: the 7-day rate chart binned straight from batch_log.
  await time("7d rate chart straight from batch_log (date_bin)", () =>
    pool.query(
      `SELECT date_bin('30 minutes', committed_at, '2000-01-01') AS t, sum(input_rows), avg((progress->'durationMs'->>'total')::int), max((progress->'latencyMs'->>'p99')::int)
         FROM batch_log WHERE pipeline_version_id = $1 AND committed_at >= $2 AND committed_at < $3 GROUP BY 1`,
      [versions[0], new Date(END.getTime() - 7 * 86_400_000), END],
    ),
  );

  // What the trigger adds to a commit: single-row inserts like the engine's, with and without it.
  const commitCost = async (withTrigger: boolean) => {
    await pool.query(`ALTER TABLE batch_log ${withTrigger ? "ENABLE" : "DISABLE"} TRIGGER batch_log_rollup`);
    const row = (
      await pool.query(
        `SELECT progress FROM batch_log WHERE pipeline_version_id = $1 ORDER BY batch_id DESC LIMIT 1`,
        [versions[1]],
      )
    ).rows[0].progress;
    const n = 2000;
    const base = (withTrigger ? 1 : 2) * 1e12 + Date.now();
    const t = performance.now();
    for (let i = 0; i < n; i++) {
      await pool.query(
        `INSERT INTO batch_log (pipeline_version_id, batch_id, committed_at, input_rows, sink_rows, outcomes, progress) VALUES ($1, $2, now(), 100, 88, $3, $4)`,
        [versions[1], base + i, JSON.stringify(row.outcomes), JSON.stringify(row)],
      );
    }
    return (performance.now() - t) / n;
  };
  const without = await commitCost(false);
  const withIt = await commitCost(true);
  console.log(
    `batch_log insert (autocommit, like one batch's row): ${without.toFixed(3)} ms without the rollup trigger, ${withIt.toFixed(3)} ms with it (+${(withIt - without).toFixed(3)} ms per batch)`,
  );
}
