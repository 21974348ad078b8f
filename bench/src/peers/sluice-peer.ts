// Sluice in a peers run: the settlements pipeline (packages/pipeline-spec/examples/merchant-settlements.yaml)
// on the run's topic, as a whole process. Parallelism 1: `sluice run --until-caught-up` (the product's
// own foreground command, exactly-once commits per batch). With `workers` > 0: that many worker
// processes (workers/src/main.ts) run it after `sluice start`'s service starts it, timed from their
// spawn until the checkpoint holds the topic's end offsets; `parallelism` > 1 puts `parallelism: N`
// in the spec (partition groups, issue 22) — refused by validation until the spec has the field.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import type pg from "pg";
import { createPrismaClient } from "@sluice/db";
import { registerPipelineVersion } from "@sluice/engine";
import { parseSpecOrThrow, validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { BatchQueue } from "@sluice/queue";
import { startPipelineRun, stopPipelineRun } from "@sluice/services";
import { spawnBenchWorker } from "../worker-process";
import { machineBusySeconds, timeProcess, type ProcessRun } from "./timed-process";

export const BENCH_ACTOR = "peers-bench@sluice.local";

export interface SluiceOptions {
  repoRoot: string;
  databaseUrl: string;
  redisUrl: string;
  topic: string;
  maxOffsets: number;
  workers: number;
  parallelism: number;
  /** Write a V8 CPU profile of the `sluice run` process into this directory (node --cpu-prof). */
  cpuProfDir?: string | undefined;
}

export async function settlementsSpec(o: SluiceOptions, name: string, table: string): Promise<TPipelineSpec> {
  const example = parseSpecOrThrow(
    await readFile(
      path.join(o.repoRoot, "packages/pipeline-spec/examples/merchant-settlements.yaml"),
      "utf8",
    ),
  );
  const checked = validateSpec({
    ...example,
    name,
    source: {
      kafka: {
        ...example.source.kafka,
        topic: o.topic,
        maxOffsetsPerTrigger: o.maxOffsets,
        ...(o.parallelism > 1 ? { parallelism: o.parallelism } : {}),
      },
    },
    // Drain the backlog, then stop, like the peers' bounded runs (no wait for a 2-second trigger).
    trigger: { availableNow: true },
    sink: { postgres: { ...example.sink!.postgres, table } },
  });
  if (!checked.ok)
    throw new Error(`the settlements spec for Sluice is refused: ${JSON.stringify(checked.errors)}`);
  return checked.spec;
}

export async function runSluice(
  o: SluiceOptions,
  pool: pg.Pool,
  run: { name: string; table: string; specFile: string; log: string; topicEnds: Record<string, number> },
): Promise<ProcessRun> {
  const spec = await settlementsSpec(o, run.name, run.table);
  const env = { ...process.env, DATABASE_URL: o.databaseUrl, LOG_LEVEL: "warn" };
  if (o.workers === 0) {
    await writeFile(run.specFile, JSON.stringify(spec, null, 2));
    return timeProcess(
      process.execPath,
      [
        ...(o.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${o.cpuProfDir}`] : []),
        path.join(o.repoRoot, "packages/cli/bin/sluice.js"),
        "run",
        run.specFile,
        "--until-caught-up",
      ],
      { cwd: o.repoRoot, env: { ...env, SLUICE_ACTOR: BENCH_ACTOR }, log: run.log },
    );
  }
  return runOnWorkers(o, pool, spec, run);
}

async function runOnWorkers(
  o: SluiceOptions,
  pool: pg.Pool,
  spec: TPipelineSpec,
  run: { name: string; log: string; topicEnds: Record<string, number> },
): Promise<ProcessRun> {
  const queueName = `bench.peers.${run.name}`;
  const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: null });
  const queue = new BatchQueue(queueName, redis);
  const db = createPrismaClient(pool);
  const { pipelineVersionId } = await registerPipelineVersion(pool, spec);
  const started = performance.now();
  const machineBefore = await machineBusySeconds();
  const workers = Array.from({ length: o.workers }, () =>
    spawnBenchWorker({ repoRoot: o.repoRoot, databaseUrl: o.databaseUrl, queueName }),
  );
  try {
    await Promise.all(workers.map((w) => w.started));
    await startPipelineRun(db, { pipelineVersionId, actor: "system:bench" }, { scheduler: queue });
    for (;;) {
      const cp = await pool.query<{ end_offsets: Record<string, number> }>(
        `SELECT end_offsets FROM checkpoints WHERE pipeline_version_id = $1`,
        [pipelineVersionId],
      );
      const ends = cp.rows[0]?.end_offsets ?? {};
      if (Object.entries(run.topicEnds).every(([p, h]) => Number(ends[p] ?? 0) >= h)) break;
      await sleep(50);
    }
    await stopPipelineRun(db, { pipelineVersionId, actor: "system:bench" });
    for (const w of workers) w.child.kill("SIGTERM");
    const codes = await Promise.all(workers.map((w) => w.exited));
    const seconds = (performance.now() - started) / 1000;
    const machineAfter = await machineBusySeconds();
    return {
      seconds,
      exitCode: codes.find((c) => c !== 0) ?? 0,
      peakMb: undefined,
      machineCpuSeconds:
        machineBefore !== undefined && machineAfter !== undefined ? machineAfter - machineBefore : undefined,
      log: run.log,
      output: "",
    };
  } finally {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGKILL");
    await db.$disconnect();
    await queue.close();
    redis.disconnect();
  }
}

/**
 * Where a Sluice run's time went, from its batches' progress records: per batch on average, the
 * phases (read and process overlap the previous commit with read-ahead), the window operator's fold,
 * state read and merge (in process) and its state and result writes (in the commit), and the windows
 * each batch upserted.
 */
export async function sluicePhases(pool: pg.Pool, pipelineName: string): Promise<string> {
  const r = await pool.query<{
    batches: number;
    read: number;
    process: number;
    commit: number;
    fold: number;
    prepare: number;
    write: number;
    windows: number;
    state: number;
  }>(
    `SELECT count(*)::int AS batches,
            avg((b.progress->'durationMs'->>'read')::float8) AS read,
            avg((b.progress->'durationMs'->>'process')::float8) AS process,
            avg((b.progress->'durationMs'->>'commit')::float8) AS commit,
            avg((b.progress->'operator'->>'foldMs')::float8) AS fold,
            avg((b.progress->'operator'->>'prepareMs')::float8) AS prepare,
            avg((b.progress->'operator'->>'writeMs')::float8) AS write,
            avg((b.progress->'operator'->>'windowsUpdated')::float8) AS windows,
            max((b.progress->>'stateRows')::float8) AS state
       FROM batch_log b JOIN pipeline_versions v ON v.id = b.pipeline_version_id JOIN pipelines p ON p.id = v.pipeline_id
      WHERE p.name = $1 AND (b.progress->>'inputRows')::int > 0`,
    [pipelineName],
  );
  const x = r.rows[0]!;
  const ms = (n: number) => `${Math.round(n)} ms`;
  return (
    `${x.batches} batches; a batch on average: read ${ms(x.read)}, process ${ms(x.process)} (window fold ${ms(x.fold)}, ` +
    `fold + state merge ${ms(x.prepare)}), commit ${ms(x.commit)} (window state and result writes ${ms(x.write)}); ` +
    `${Math.round(x.windows)} windows upserted a batch; state up to ${Math.round(x.state).toLocaleString("en-US")} rows`
  );
}
