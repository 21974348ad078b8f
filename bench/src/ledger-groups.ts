// Partition groups on this machine (issue 22): the payments ledger
// (packages/pipeline-spec/examples/payments-ledger.yaml) drained from one topic three ways, alternating
// over several rounds: one `sluice run --until-caught-up` process; two processes at once, one per
// partition group (`source.kafka.parallelism: 2`, `--group 0` and `--group 1`); and the same two
// groups one after the other — the groups' own overhead without running side by side, which tells
// what running them at once costs on this machine's cores apart from what grouping costs.
// Each run's wall time is from the first process's spawn to the last one's exit; every run's sink is
// checked to hold each event id once, and the same ids as the first one-process run, before its time counts.
//
//   npx tsx bench/src/ledger-groups.ts                      # 400k messages, 4 partitions, 3 rounds
//   npx tsx bench/src/ledger-groups.ts --messages 1000000 --rounds 5
import { readFile, writeFile, mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Kafka, logLevel } from "kafkajs";
import { z } from "zod";
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { parseSpecOrThrow, validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { producePayments } from "@sluice/producer";
import { fmt } from "./format";
import { machineBusySeconds, tail, timeProcess, type ProcessRun } from "./peers/timed-process";
import { BENCH_ACTOR } from "./peers/sluice-peer";
import { createScratchDatabase } from "./scratch-database";
import { createTestUsers } from "@sluice/testing";

const { values } = parseArgs({
  options: {
    messages: { type: "string" },
    partitions: { type: "string" },
    "max-offsets": { type: "string" },
    rounds: { type: "string" },
  },
});
const opts = z
  .object({
    messages: z.coerce.number().int().min(1000).default(400_000),
    partitions: z.coerce.number().int().min(2).default(4),
    maxOffsets: z.coerce.number().int().min(100).default(20_000),
    rounds: z.coerce.number().int().min(1).default(3),
  })
  .parse({
    messages: values.messages,
    partitions: values.partitions,
    maxOffsets: values["max-offsets"],
    rounds: values.rounds,
  });
const REPO_ROOT = path.resolve(import.meta.dirname, "../..");
const env = loadEnv(ZServiceEnv);
const kafka = new Kafka({ brokers: env.KAFKA_BROKERS, clientId: "sluice-bench", logLevel: logLevel.NOTHING });
const topic = `bench_ledger_groups_${Date.now().toString(36)}`;
const db = await createScratchDatabase(env.DATABASE_URL);
const dir = await mkdtemp(path.join(tmpdir(), "sluice-ledger-groups-"));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

const example = parseSpecOrThrow(
  await readFile(path.join(REPO_ROOT, "packages/pipeline-spec/examples/payments-ledger.yaml"), "utf8"),
);

function specFor(name: string, groups: number): TPipelineSpec {
  const checked = validateSpec({
    ...example,
    name,
    source: {
      kafka: {
        ...example.source.kafka,
        topic,
        maxOffsetsPerTrigger: opts.maxOffsets,
        ...(groups > 1 ? { parallelism: groups } : {}),
      },
    },
    trigger: { availableNow: true },
    sink: { postgres: { ...example.sink!.postgres, table: name.replaceAll("-", "_") } },
  });
  if (!checked.ok) throw new Error(`the ledger spec is refused: ${JSON.stringify(checked.errors)}`);
  return checked.spec;
}

type Mode = "one process" | "two groups at once" | "two groups in turn";
const MODES: Mode[] = ["one process", "two groups at once", "two groups in turn"];

/** One run: one process, or one per group (at once or in turn), timed from the first spawn to the last exit. */
async function runLedger(
  name: string,
  mode: Mode,
): Promise<{ seconds: number; machineCpu: number | undefined }> {
  const groups = mode === "one process" ? 1 : 2;
  const spec = specFor(name, groups);
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(spec, null, 2));
  const childEnv = { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: "warn", SLUICE_ACTOR: BENCH_ACTOR };
  const started = performance.now();
  const machineBefore = await machineBusySeconds();
  const runGroup = (g: number) =>
    timeProcess(
      process.execPath,
      [
        path.join(REPO_ROOT, "packages/cli/bin/sluice.js"),
        "run",
        file,
        "--until-caught-up",
        ...(groups > 1 ? ["--group", String(g)] : []),
      ],
      { cwd: REPO_ROOT, env: childEnv, log: path.join(dir, `${name}.g${g}.log`) },
    );
  const runs: ProcessRun[] = [];
  if (mode === "two groups in turn") for (let g = 0; g < groups; g++) runs.push(await runGroup(g));
  else runs.push(...(await Promise.all(Array.from({ length: groups }, (_, g) => runGroup(g)))));
  const seconds = (performance.now() - started) / 1000;
  const machineAfter = await machineBusySeconds();
  for (const r of runs)
    if (r.exitCode !== 0) throw new Error(`${name} exited ${r.exitCode}:\n${tail(r.output)}`);
  return {
    seconds,
    machineCpu:
      machineBefore !== undefined && machineAfter !== undefined ? machineAfter - machineBefore : undefined,
  };
}

/** Where a run's time went, from its batches' progress records: how many, how many read ahead, the phases' sums. */
async function phases(name: string): Promise<string> {
  const r = await db.pool.query<{ n: string; ahead: string; read: string; process: string; commit: string }>(
    `SELECT count(*) AS n, count(*) FILTER (WHERE (b.progress->>'preparedAhead')::boolean) AS ahead,
            sum((b.progress->'durationMs'->>'read')::numeric) AS read, sum((b.progress->'durationMs'->>'process')::numeric) AS process,
            sum((b.progress->'durationMs'->>'commit')::numeric) AS commit
       FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id
      WHERE p.name = $1 AND b.input_rows > 0`,
    [name],
  );
  const x = r.rows[0]!;
  const s = (ms: string) => fmt(Number(ms) / 1000);
  return `${x.n} batches (${x.ahead} read ahead); read ${s(x.read)} s, process ${s(x.process)} s, commit ${s(x.commit)} s summed`;
}

/** Each id once, and the same ids as `reference` (the first one-process run's table) when given. */
async function checkSink(table: string, reference: string | undefined): Promise<number> {
  const r = await db.pool.query<{ rows: string; ids: string }>(
    `SELECT count(*) AS rows, count(DISTINCT event_id) AS ids FROM ${table}`,
  );
  const rows = Number(r.rows[0]!.rows);
  if (rows !== Number(r.rows[0]!.ids))
    throw new Error(`${table}: ${rows} rows but ${r.rows[0]!.ids} distinct ids`);
  if (reference) {
    const differ = await db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ((SELECT event_id FROM ${table} EXCEPT SELECT event_id FROM ${reference}) UNION ALL (SELECT event_id FROM ${reference} EXCEPT SELECT event_id FROM ${table})) d`,
    );
    if (Number(differ.rows[0]!.n) !== 0)
      throw new Error(`${table}: ${differ.rows[0]!.n} event ids differ from ${reference}'s`);
  }
  return rows;
}

try {
  // `sluice run` registers as a known person of the ledger's team.
  await createTestUsers(db.pool, [{ email: BENCH_ACTOR, role: "admin", teams: [example.owner] }]);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: opts.partitions }], waitForLeaders: true });
  await admin.disconnect();
  const { manifest } = await producePayments({
    topic,
    kafka,
    count: opts.messages,
    partitions: opts.partitions,
    seed: 22,
    duplicateShare: 0.05,
    malformedShare: 0.001,
    manifest: "ids",
    log: () => undefined,
  });
  console.log(
    `${opts.messages} messages on ${opts.partitions} partitions (${manifest.counts.duplicates} duplicates), ${opts.maxOffsets} offsets a batch, ${opts.rounds} rounds; load ${loadavg()[0]!.toFixed(1)}`,
  );
  let reference: string | undefined;
  const times = new Map<Mode, number[]>(MODES.map((m) => [m, []]));
  const cpu = new Map<Mode, number[]>(MODES.map((m) => [m, []]));
  for (let round = 1; round <= opts.rounds; round++) {
    // Rotate which goes first, so a machine that warms up or slows down favours none. The first run
    // of all is one process: the reference every other sink is compared with.
    const order = MODES.map((_, i) => MODES[(i + round - 1) % MODES.length]!);
    for (const mode of order) {
      const name = `ledger-${MODES.indexOf(mode)}-r${round}`;
      const run = await runLedger(name, mode);
      const table = name.replaceAll("-", "_");
      const rows = await checkSink(table, reference);
      if (mode === "one process") reference ??= table;
      times.get(mode)!.push(run.seconds);
      if (run.machineCpu !== undefined) cpu.get(mode)!.push(run.machineCpu);
      console.log(`  ${await phases(name)}`);
      console.log(
        `round ${round}, ${mode}: ${fmt(run.seconds)} s, machine CPU ${run.machineCpu === undefined ? "?" : fmt(run.machineCpu)} s, load ${loadavg()[0]!.toFixed(1)} — ${rows} rows, each id once${reference === table ? "" : ", the same ids"}`,
      );
    }
  }
  const one = median(times.get("one process")!);
  for (const mode of MODES)
    console.log(
      `median ${mode}: ${fmt(median(times.get(mode)!))} s (speed-up ${(one / median(times.get(mode)!)).toFixed(2)}×), machine CPU ${fmt(median(cpu.get(mode)!))} s`,
    );
} finally {
  await rm(dir, { recursive: true, force: true });
  await db.close();
}
