// Partition groups on this machine (issue 22): the payments ledger
// (packages/pipeline-spec/examples/payments-ledger.yaml) drained from one topic by one
// `sluice run --until-caught-up` process, and by two processes, one per partition group
// (`source.kafka.parallelism: 2`, `--group 0` and `--group 1`), alternating over several rounds.
// Each run's wall time is from the first process's spawn to the last one's exit; every run's sink is
// checked to hold exactly the topic's distinct event ids, once each, before its time counts.
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

/** One run: `groups` processes at once (none with --group for 1), timed from the first spawn to the last exit. */
async function runLedger(
  name: string,
  groups: number,
): Promise<{ seconds: number; machineCpu: number | undefined }> {
  const spec = specFor(name, groups);
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(spec, null, 2));
  const childEnv = { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: "warn", SLUICE_ACTOR: BENCH_ACTOR };
  const started = performance.now();
  const machineBefore = await machineBusySeconds();
  const runs: ProcessRun[] = await Promise.all(
    Array.from({ length: groups }, (_, g) =>
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
      ),
    ),
  );
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

/** The sink holds every distinct id once: the same answer for one process and for two groups. */
async function checkSink(table: string, expected: number): Promise<void> {
  const r = await db.pool.query<{ rows: string; ids: string }>(
    `SELECT count(*) AS rows, count(DISTINCT event_id) AS ids FROM ${table}`,
  );
  const { rows, ids } = r.rows[0]!;
  if (Number(rows) !== expected || Number(ids) !== expected)
    throw new Error(`${table}: ${rows} rows, ${ids} distinct ids; expected ${expected} of each`);
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
  const expected = new Set(manifest.eventIds).size;
  console.log(
    `${opts.messages} messages on ${opts.partitions} partitions (${expected} distinct ids), ${opts.maxOffsets} offsets a batch, ${opts.rounds} rounds; load ${loadavg()[0]!.toFixed(1)}`,
  );
  const times: Record<1 | 2, number[]> = { 1: [], 2: [] };
  const cpu: Record<1 | 2, number[]> = { 1: [], 2: [] };
  for (let round = 1; round <= opts.rounds; round++) {
    // Alternate which goes first, so a machine that warms up or slows down favours neither.
    for (const groups of round % 2 === 1 ? ([1, 2] as const) : ([2, 1] as const)) {
      const name = `ledger-p${groups}-r${round}`;
      const run = await runLedger(name, groups);
      await checkSink(name.replaceAll("-", "_"), expected);
      times[groups].push(run.seconds);
      if (run.machineCpu !== undefined) cpu[groups].push(run.machineCpu);
      console.log(
        `round ${round}, ${groups === 1 ? "one process" : "two groups"}: ${fmt(run.seconds)} s, machine CPU ${run.machineCpu === undefined ? "?" : fmt(run.machineCpu)} s, load ${loadavg()[0]!.toFixed(1)} — sink exact`,
      );
    }
  }
  const one = median(times[1]);
  const two = median(times[2]);
  console.log(
    `median: one process ${fmt(one)} s, two groups ${fmt(two)} s → speed-up ${(one / two).toFixed(2)}× (machine CPU ${fmt(median(cpu[1]))} vs ${fmt(median(cpu[2]))} s)`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
  await db.close();
}
