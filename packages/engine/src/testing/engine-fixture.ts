// Shared set-up for the engine's integration tests: a database of its own, a unique topic, a spec
// pointed at both, and helpers to read back what the pipeline stored. Real Postgres and Kafka only.
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import { validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { createTestDatabase, endPool, testServices, uniqueName, type TestDatabase } from "@sluice/testing";
import type { EngineLogger } from "../runner/engine-logger";
import { PipelineRunner, type EngineResources, type RunnerOptions } from "../runner/pipeline-runner";
import type { BatchProgress } from "../store/progress-record";
import { registerPipelineVersion } from "../store/register-version";

export const silentLogger: EngineLogger = { info() {}, warn() {}, error() {} };

export interface EngineFixture {
  db: TestDatabase;
  pool: pg.Pool;
  kafka: Kafka;
  topic: string;
  resources: EngineResources;
  close(): Promise<void>;
}

export async function createEngineFixture(label: string): Promise<EngineFixture> {
  const db = await createTestDatabase(label);
  const pool = new pg.Pool({ connectionString: db.url, max: 8 });
  const kafka = new Kafka({
    brokers: testServices.kafkaBrokers,
    clientId: `it-${label}`,
    logLevel: logLevel.NOTHING,
  });
  const topic = uniqueName(label);
  return {
    db,
    pool,
    kafka,
    topic,
    resources: { pool, kafka, logger: silentLogger },
    async close() {
      const admin = kafka.admin();
      await admin.connect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
      await endPool(pool);
      await db.drop();
    },
  };
}

/** The ledger spec every engine test starts from; override any section. */
export function ledgerSpec(topic: string, overrides: Record<string, unknown> = {}): TPipelineSpec {
  const result = validateSpec({
    name: "ledger",
    owner: "payments-data",
    source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 2000 } },
    format: "json",
    contract: {
      fields: {
        event_id: "string",
        type: "string",
        merchant_id: "string",
        customer_id: "string",
        payment_id: "string",
        seq: "int",
        amount: "decimal",
        currency: "string",
        card_country: "string",
        event_time: "timestamp",
      },
      onUnknownField: "rescue",
      onTypeMismatch: "quarantine",
    },
    eventTime: { column: "event_time", watermarkDelay: "48h" },
    dedupe: { key: ["event_id"], within: "watermark" },
    expectations: [{ name: "known_currency", expr: "currency in ['USD','EUR','GBP']", action: "warn" }],
    lateData: "deadLetter",
    sink: { postgres: { table: "ledger" } },
    trigger: { every: "1s" },
    ...overrides,
  });
  if (!result.ok) throw new Error(`bad test spec: ${JSON.stringify(result.errors)}`);
  return result.spec;
}

export async function sinkEventIds(pool: pg.Pool, table = "ledger"): Promise<string[]> {
  const res = await pool.query<{ event_id: string }>(`SELECT event_id FROM "${table}" ORDER BY event_id`);
  return res.rows.map((r) => r.event_id);
}

export async function batchLog(pool: pg.Pool, pipelineVersionId: string) {
  const res = await pool.query<{
    batch_id: string;
    input_rows: number;
    outcomes: Record<string, unknown>;
    progress: Record<string, unknown>;
  }>(
    `SELECT batch_id, input_rows, outcomes, progress FROM batch_log WHERE pipeline_version_id = $1 ORDER BY batch_id`,
    [pipelineVersionId],
  );
  return res.rows.map((r) => ({ ...r, batchId: Number(r.batch_id) }));
}

/** The ids of a pipeline's versions, oldest first. */
export async function pipelineVersionIds(pool: pg.Pool, name: string): Promise<string[]> {
  const res = await pool.query<{ id: string }>(
    `SELECT v.id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1 ORDER BY v.version`,
    [name],
  );
  return res.rows.map((r) => r.id);
}

/** Register the spec and run it in this process until caught up; the progress of every batch. */
export async function drainPipeline(
  fx: Pick<EngineFixture, "pool" | "resources">,
  spec: TPipelineSpec,
  owner = "test",
  options: Pick<RunnerOptions, "readAhead"> = {},
): Promise<{ pipelineVersionId: string; progress: BatchProgress[] }> {
  const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
  const runner = await PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner, ...options });
  return { pipelineVersionId, progress: await drainRunner(runner) };
}

/** Run batches until caught up (an empty batch), then close the runner; the progress of every batch. */
export async function drainRunner(runner: PipelineRunner): Promise<BatchProgress[]> {
  const progress: BatchProgress[] = [];
  try {
    for (;;) {
      const r = await runner.runBatch();
      if (r.kind === "empty") break;
      progress.push(r.progress);
    }
  } finally {
    await runner.close();
  }
  return progress;
}
