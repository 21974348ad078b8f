// One measured pipeline run, as both engine benchmarks take it: register the spec on the scratch
// database, run it in this process until caught up (exactly-once commits), and report the wall time
// and CPU per message of this process (Node) and of the database's backends (Postgres).
import type { Kafka } from "kafkajs";
import type pg from "pg";
import { PipelineRunner, registerPipelineVersion, type BatchProgress } from "@sluice/engine";
import { drainRunner, silentLogger } from "@sluice/engine/testing";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { nodeCpuMs, postgresCpuMs } from "./cpu-usage";

export interface MeasuredRun {
  batches: BatchProgress[];
  elapsedMs: number;
  nodeUsPerMessage: number;
  /** null when Postgres' backends are not visible in /proc (another machine). */
  postgresUsPerMessage: number | null;
}

export async function measurePipeline(
  pool: pg.Pool,
  kafka: Kafka,
  spec: TPipelineSpec,
  messages: number,
): Promise<MeasuredRun> {
  const { pipelineVersionId } = await registerPipelineVersion(pool, spec);
  const pgBefore = await postgresCpuMs(pool);
  const nodeBefore = nodeCpuMs();
  const started = performance.now();
  const runner = await PipelineRunner.open(
    { pool, kafka, logger: silentLogger },
    { pipelineVersionId, spec, owner: "bench" },
  );
  const batches = await drainRunner(runner);
  const elapsedMs = performance.now() - started;
  const nodeUsPerMessage = ((nodeCpuMs() - nodeBefore) * 1000) / messages;
  const pgAfter = await postgresCpuMs(pool);
  const postgresUsPerMessage =
    pgBefore !== null && pgAfter !== null ? ((pgAfter - pgBefore) * 1000) / messages : null;
  return { batches, elapsedMs, nodeUsPerMessage, postgresUsPerMessage };
}
