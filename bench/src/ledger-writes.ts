// The ledger's Postgres work, two questions from issue 22, each answered in one run:
//
// 1. Is the ledger's separate dedup state redundant? An append ledger keyed by event_id already
//    refuses a second insert of the same id (ON CONFLICT DO NOTHING, counted as a duplicate), so the
//    engine keeps no dedup state for it (engine batch/dedup.ts dedupKeptBySink). The payments ledger
//    (packages/pipeline-spec/examples/payments-ledger.yaml) runs on one topic as written (keys kept
//    by the table) and with its table keyed by (event_id, payment_id) — which cannot refuse an event
//    id alone, so the engine keeps dedup state (looked up, inserted and evicted every batch), as every
//    ledger did before — alternating, each run drained by PipelineRunner with exactly-once commits;
//    both sinks must hold the same rows (compared column by column, source positions included).
// 2. Does COPY beat the bulk INSERT … SELECT FROM jsonb_array_elements? The first run's ledger rows,
//    in batches of --max-offsets, written into fresh copies of the ledger table three ways:
//    the engine's bulk insert (store/bulk.ts) with ON CONFLICT DO NOTHING; COPY (pg-copy-streams)
//    into a temporary table, then INSERT … SELECT … ON CONFLICT DO NOTHING; and COPY straight into
//    the table (no conflict handling: only safe when no row can exist yet — a bound, not an option
//    for a replayable ledger). 5% of each batch repeats ids of the previous one, as replays would.
//
//   npx tsx bench/src/ledger-writes.ts                       # 200k messages, 20k a batch, 3 rounds
//   npx tsx bench/src/ledger-writes.ts --messages 500000 --max-offsets 50000
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import { parseArgs } from "node:util";
import { Kafka, logLevel } from "kafkajs";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { z } from "zod";
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { bulkSelect } from "@sluice/engine/testing";
import { parseSpecOrThrow, validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { producePayments } from "@sluice/producer";
import { nodeCpuMs, postgresCpuMs } from "./cpu-usage";
import { fmt } from "./format";
import { measurePipeline } from "./measure-pipeline";
import { createScratchDatabase } from "./scratch-database";

const { values } = parseArgs({
  options: { messages: { type: "string" }, "max-offsets": { type: "string" }, rounds: { type: "string" } },
});
const opts = z
  .object({
    messages: z.coerce.number().int().min(1000).default(200_000),
    maxOffsets: z.coerce.number().int().min(100).default(20_000),
    rounds: z.coerce.number().int().min(1).default(3),
  })
  .parse({ messages: values.messages, maxOffsets: values["max-offsets"], rounds: values.rounds });
const env = loadEnv(ZServiceEnv);
const kafka = new Kafka({ brokers: env.KAFKA_BROKERS, clientId: "sluice-bench", logLevel: logLevel.NOTHING });
const topic = `bench_ledger_writes_${Date.now().toString(36)}`;
const db = await createScratchDatabase(env.DATABASE_URL);
const { pool } = db;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const load = () => loadavg()[0]!.toFixed(1);

function ledgerSpec(example: TPipelineSpec, name: string, withDedupState: boolean): TPipelineSpec {
  const checked = validateSpec({
    ...example,
    name,
    source: { kafka: { ...example.source.kafka, topic, maxOffsetsPerTrigger: opts.maxOffsets } },
    sink: {
      postgres: {
        table: name.replaceAll("-", "_"),
        mode: "append",
        // A payment event has one payment id: the same rows either way, but only event_id alone lets
        // the table keep the dedup keys.
        key: withDedupState ? ["event_id", "payment_id"] : ["event_id"],
      },
    },
  });
  if (!checked.ok) throw new Error(`ledger spec refused: ${JSON.stringify(checked.errors)}`);
  return checked.spec;
}

// ---- 1. dedup state vs the keys kept by the table ----
async function dedupStateQuestion(total: number): Promise<string> {
  const example = parseSpecOrThrow(
    await readFile(
      new URL("../../packages/pipeline-spec/examples/payments-ledger.yaml", import.meta.url),
      "utf8",
    ),
  );
  const runs: {
    variant: string;
    seconds: number;
    node: number;
    pg: number | null;
    commitMs: number;
    duplicates: number;
  }[] = [];
  for (let round = 1; round <= opts.rounds; round++) {
    const order = round % 2 ? [true, false] : [false, true];
    for (const withState of order) {
      const variant = withState ? "dedup state" : "kept by table";
      const spec = ledgerSpec(example, `ledger-${withState ? "state" : "table"}-r${round}`, withState);
      const m = await measurePipeline(pool, kafka, spec, total);
      const commitMs = m.batches.reduce((s, b) => s + b.durationMs.commit, 0);
      const duplicates = m.batches.reduce((s, b) => s + b.outcomes.duplicate, 0);
      // The variants measure what they say: state kept only where the table cannot keep the keys.
      const keys = Math.max(...m.batches.map((b) => b.stateRows));
      if (withState ? keys === 0 : keys !== 0)
        throw new Error(`${variant}: ${keys} dedup keys at most — not the variant it should be`);
      runs.push({
        variant,
        seconds: m.elapsedMs / 1000,
        node: m.nodeUsPerMessage,
        pg: m.postgresUsPerMessage,
        commitMs,
        duplicates,
      });
      console.log(
        `round ${round} ${variant.padEnd(17)} ${(m.elapsedMs / 1000).toFixed(2)} s, commit ${fmt(commitMs)} ms summed, CPU node ${m.nodeUsPerMessage.toFixed(1)} + postgres ${m.postgresUsPerMessage?.toFixed(1) ?? "n/a"} µs/msg, ${fmt(duplicates)} duplicates, load ${load()}`,
      );
    }
  }
  // Same rows either way, source positions included (the batch and version columns differ by design).
  const cols = `event_id, type, merchant_id, seq, payment_id, customer_id, amount, currency, card_country, event_time, _rescued, _topic, _partition, _offset`;
  for (let round = 1; round <= opts.rounds; round++) {
    const diff = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ((SELECT ${cols} FROM ledger_state_r${round} EXCEPT SELECT ${cols} FROM ledger_table_r${round})
        UNION ALL (SELECT ${cols} FROM ledger_table_r${round} EXCEPT SELECT ${cols} FROM ledger_state_r${round})) d`,
    );
    if (diff.rows[0]!.n !== 0) {
      const rows = await pool.query(
        `(SELECT 'dedup state' AS ledger, ${cols} FROM ledger_state_r${round} EXCEPT SELECT 'dedup state', ${cols} FROM ledger_table_r${round})
          UNION ALL (SELECT 'kept by table', ${cols} FROM ledger_table_r${round} EXCEPT SELECT 'kept by table', ${cols} FROM ledger_state_r${round})
          ORDER BY event_id LIMIT 20`,
      );
      console.table(rows.rows);
      throw new Error(
        `round ${round}: the two ledgers differ in ${diff.rows[0]!.n} rows (the first 20 above)`,
      );
    }
  }
  const summary = (variant: string) => {
    const r = runs.filter((x) => x.variant === variant);
    return {
      s: median(r.map((x) => x.seconds)),
      commit: median(r.map((x) => x.commitMs)),
      node: median(r.map((x) => x.node)),
      pg: median(r.map((x) => x.pg ?? NaN)),
    };
  };
  const a = summary("dedup state");
  const b = summary("kept by table");
  return (
    `dedup state: median ${a.s.toFixed(2)} s (commit ${fmt(a.commit)} ms, CPU ${a.node.toFixed(1)} + ${a.pg.toFixed(1)} µs/msg); ` +
    `kept by table: ${b.s.toFixed(2)} s (commit ${fmt(b.commit)} ms, CPU ${b.node.toFixed(1)} + ${b.pg.toFixed(1)} µs/msg); ` +
    `kept by table ÷ dedup state = ${(b.s / a.s).toFixed(2)}; every round's two ledgers hold the same rows`
  );
}

// ---- 2. COPY vs the bulk INSERT … SELECT FROM jsonb_array_elements ----
type Row = Record<string, unknown>;
const COLUMNS: { name: string; sqlType: string }[] = [
  { name: "event_id", sqlType: "text" },
  { name: "type", sqlType: "text" },
  { name: "merchant_id", sqlType: "text" },
  { name: "seq", sqlType: "bigint" },
  { name: "payment_id", sqlType: "text" },
  { name: "customer_id", sqlType: "text" },
  { name: "amount", sqlType: "numeric" },
  { name: "currency", sqlType: "text" },
  { name: "card_country", sqlType: "text" },
  { name: "event_time", sqlType: "timestamptz" },
  { name: "_rescued", sqlType: "jsonb" },
  { name: "_topic", sqlType: "text" },
  { name: "_partition", sqlType: "integer" },
  { name: "_offset", sqlType: "bigint" },
  { name: "_ingest_time", sqlType: "timestamptz" },
  { name: "_batch_id", sqlType: "bigint" },
  { name: "_pipeline_version", sqlType: "text" },
];
const names = COLUMNS.map((c) => `"${c.name}"`).join(", ");

/** COPY's text format: tab-separated, \N for null, backslash escapes. */
function copyText(rows: Row[]): string {
  const esc = (s: string) =>
    s.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r"));
  let out = "";
  for (const r of rows) {
    out += COLUMNS.map(({ name, sqlType }) => {
      const v = r[name];
      if (v === null || v === undefined) return "\\N";
      if (sqlType === "timestamptz") return new Date(v as number).toISOString();
      return esc(sqlType === "jsonb" ? JSON.stringify(v) : String(v));
    }).join("\t");
    out += "\n";
  }
  return out;
}

const WRITERS: Record<string, (c: pg.PoolClient, table: string, rows: Row[]) => Promise<void>> = {
  "bulk INSERT (jsonb_array_elements)": async (c, table, rows) => {
    const { sql, params } = bulkSelect(
      COLUMNS.map((col) => ({ ...col, values: rows.map((r) => r[col.name]) })),
    );
    await c.query(
      `INSERT INTO ${table} (${names}) SELECT * FROM (${sql}) u ON CONFLICT (event_id) DO NOTHING`,
      params,
    );
  },
  "COPY to a temp table + INSERT": async (c, table, rows) => {
    await c.query(`CREATE TEMP TABLE IF NOT EXISTS copy_stage (LIKE ${table}) ON COMMIT DELETE ROWS`);
    await pipeline(
      Readable.from([copyText(rows)]),
      c.query(copyFrom(`COPY copy_stage (${names}) FROM STDIN`)),
    );
    await c.query(`INSERT INTO ${table} SELECT * FROM copy_stage ON CONFLICT (event_id) DO NOTHING`);
  },
  "COPY straight in (no conflicts possible)": async (c, table, rows) => {
    await pipeline(Readable.from([copyText(rows)]), c.query(copyFrom(`COPY ${table} (${names}) FROM STDIN`)));
  },
};

async function copyQuestion(source: string): Promise<string> {
  const all = (
    await pool.query<Row>(
      `SELECT ${names.replace('"event_time"', `(extract(epoch FROM event_time) * 1000)::float8 AS event_time`).replace('"_ingest_time"', `(extract(epoch FROM _ingest_time) * 1000)::float8 AS _ingest_time`)} FROM ${source} ORDER BY _partition, _offset`,
    )
  ).rows;
  // A replay's repeats: 5% of the previous batch's rows again, refused by the key (plain COPY gets none).
  const batches: { fresh: Row[]; repeats: Row[] }[] = [];
  for (let i = 0; i < all.length; i += opts.maxOffsets) {
    const prev = batches.at(-1)?.fresh ?? [];
    batches.push({
      fresh: all.slice(i, i + opts.maxOffsets),
      repeats: prev.slice(0, Math.floor(prev.length / 20)),
    });
  }
  const results: Record<string, { ms: number[]; node: number[]; pg: number[] }> = {};
  const variants = Object.keys(WRITERS);
  for (let round = 1; round <= opts.rounds; round++) {
    const order = variants.map((_, i) => variants[(i + round - 1) % variants.length]!);
    for (const v of order) {
      const straight = v.startsWith("COPY straight");
      const table = `copy_${variants.indexOf(v)}_r${round}`;
      // The ledger is read through its serving view, whose LIKE copies no constraint: key the copy as
      // the engine keys the ledger's physical table.
      await pool.query(`CREATE TABLE ${table} (LIKE ${source}, PRIMARY KEY (event_id))`);
      const client = await pool.connect();
      try {
        const pg0 = await postgresCpuMs(pool);
        const node0 = nodeCpuMs();
        const t0 = performance.now();
        for (const batch of batches) {
          // Plain COPY cannot skip keys already present: it gets the batches without the repeats.
          const rows = straight ? batch.fresh : [...batch.fresh, ...batch.repeats];
          await client.query("BEGIN");
          await WRITERS[v]!(client, table, rows);
          await client.query("COMMIT");
        }
        const ms = performance.now() - t0;
        const pg1 = await postgresCpuMs(pool);
        const r = (results[v] ??= { ms: [], node: [], pg: [] });
        r.ms.push(ms / batches.length);
        r.node.push((nodeCpuMs() - node0) / batches.length);
        if (pg0 !== null && pg1 !== null) r.pg.push((pg1 - pg0) / batches.length);
      } finally {
        client.release();
      }
      const n = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
      if (n.rows[0]!.n !== all.length)
        throw new Error(`${v} wrote ${n.rows[0]!.n} rows, expected ${all.length}`);
    }
  }
  const base = median(results[variants[0]!]!.ms);
  return variants
    .map((v) => {
      const r = results[v]!;
      return `  ${v.padEnd(40)} ${median(r.ms).toFixed(1).padStart(7)} ms a batch (${r.ms.map((x) => x.toFixed(0)).join(", ")}), CPU node ${median(r.node).toFixed(1)} + postgres ${r.pg.length ? median(r.pg).toFixed(1) : "n/a"} ms, ${(median(r.ms) / base).toFixed(2)}× the bulk INSERT`;
    })
    .join("\n");
}

try {
  const produced = await producePayments({
    topic,
    kafka,
    count: opts.messages,
    partitions: 3,
    seed: "bench",
    duplicateShare: 0.05,
    malformedShare: 0.01,
    outOfOrderShare: 0.05,
    manifest: "counts",
    batchSize: 5000,
    log: () => undefined,
  });
  const total = produced.manifest.counts.messages;
  console.log(`produced ${fmt(total)} messages to ${topic}; load average ${load()}`);
  console.log(`\n1. dedup state: ${await dedupStateQuestion(total)}`);
  console.log(
    `\n2. writing the ledger's rows in batches of ${fmt(opts.maxOffsets)} (+5% repeats of the previous batch), median of ${opts.rounds}:`,
  );
  console.log(await copyQuestion("ledger_state_r1"));
} finally {
  await db.close();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
}
