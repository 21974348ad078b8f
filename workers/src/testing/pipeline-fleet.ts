// Several ledger pipelines over a few topics, started through the lifecycle service and run by worker
// processes — the set-up of the fleet tests (SIGKILL chaos, Redis flush, rolling restart, fairness).
import type { Kafka } from "kafkajs";
import type pg from "pg";
import { expect } from "vitest";
import type { PrismaClient } from "@sluice/db";
import { registerPipelineVersion } from "@sluice/engine";
import { auditExactlyOnce, ledgerSpec } from "@sluice/engine/testing";
import { PaymentProducer, type Manifest } from "@sluice/producer";
import { startPipelineRun, type TBatchScheduler } from "@sluice/services";
import { waitFor } from "@sluice/testing";

export interface FleetPipelineDef {
  name: string;
  topic: string;
  maxOffsetsPerTrigger: number;
  every: string;
  /** source.kafka.parallelism: read in this many partition groups, one job chain each. */
  parallelism?: number;
  /** Spec sections replacing the ledger's (e.g. an aggregate for a windowed pipeline). */
  overrides?: Record<string, unknown>;
}

export interface FleetPipeline extends FleetPipelineDef {
  table: string;
  pipelineVersionId: string;
}

export async function startFleet(
  pool: pg.Pool,
  db: PrismaClient,
  scheduler: TBatchScheduler,
  defs: FleetPipelineDef[],
): Promise<FleetPipeline[]> {
  const fleet: FleetPipeline[] = [];
  for (const d of defs) {
    const table = d.name.replace(/-/g, "_");
    const spec = ledgerSpec(d.topic, {
      name: d.name,
      source: {
        kafka: {
          topic: d.topic,
          startingOffsets: "earliest",
          maxOffsetsPerTrigger: d.maxOffsetsPerTrigger,
          ...(d.parallelism ? { parallelism: d.parallelism } : {}),
        },
      },
      sink: { postgres: { table } },
      trigger: { every: d.every },
      ...d.overrides,
    });
    const { pipelineVersionId } = await registerPipelineVersion(pool, spec);
    await startPipelineRun(
      db,
      { pipelineVersionId, actor: "user:test@sluice.local", reason: "fleet test" },
      { scheduler },
    );
    fleet.push({ ...d, table, pipelineVersionId });
  }
  return fleet;
}

export async function topicEnds(kafka: Kafka, topic: string): Promise<Record<string, number>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return Object.fromEntries(offsets.map((o) => [String(o.partition), Number(o.high)]));
  } finally {
    await admin.disconnect();
  }
}

/** How many offsets each pipeline still has to read. */
export async function fleetBacklog(
  pool: pg.Pool,
  kafka: Kafka,
  fleet: FleetPipeline[],
): Promise<Record<string, number>> {
  const ends = new Map<string, Record<string, number>>();
  for (const t of new Set(fleet.map((p) => p.topic))) ends.set(t, await topicEnds(kafka, t));
  const res = await pool.query<{ pipeline_version_id: string; end_offsets: Record<string, number> }>(
    `SELECT pipeline_version_id, end_offsets FROM checkpoints WHERE pipeline_version_id = ANY($1)`,
    [fleet.map((p) => p.pipelineVersionId)],
  );
  const committed = new Map(res.rows.map((r) => [r.pipeline_version_id, r.end_offsets]));
  return Object.fromEntries(
    fleet.map((p) => {
      const end = committed.get(p.pipelineVersionId) ?? {};
      const high = ends.get(p.topic)!;
      return [
        p.name,
        Object.entries(high).reduce((sum, [part, h]) => sum + Math.max(0, h - (end[part] ?? 0)), 0),
      ];
    }),
  );
}

export async function waitFleetCaughtUp(
  pool: pg.Pool,
  kafka: Kafka,
  fleet: FleetPipeline[],
  timeoutMs: number,
): Promise<void> {
  let last: Record<string, number> = {};
  await waitFor(
    "every pipeline to reach the topic's end offsets",
    async () => {
      last = await fleetBacklog(pool, kafka, fleet);
      return Object.values(last).every((n) => n === 0);
    },
    timeoutMs,
    500,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; backlog: ${JSON.stringify(last)}`);
  });
}

/** Every pipeline's sink holds each produced event id exactly once, and its batches tile the topic. */
export async function auditFleet(
  pool: pg.Pool,
  kafka: Kafka,
  fleet: FleetPipeline[],
  manifests: Map<string, Manifest>,
): Promise<{ batches: number; replayed: number }> {
  let batches = 0;
  let replayed = 0;
  for (const p of fleet) {
    const manifest = manifests.get(p.topic)!;
    const audit = await auditExactlyOnce({
      pool,
      kafka,
      topic: p.topic,
      table: p.table,
      versionIds: [p.pipelineVersionId],
      expectedIds: manifest.eventIds!,
      counts: manifest.counts,
      ...(p.parallelism ? { groups: p.parallelism } : {}),
    });
    batches += audit.batches.length;
    replayed += audit.batches.filter((b) => b.progress.replayed).length;
  }
  expect(batches).toBeGreaterThan(0);
  return { batches, replayed };
}

/**
 * For pipelines whose sink is not an event ledger (windows): committed batches are gap-free, each
 * balances (input = sum of outcomes), and together they read every offset of the topic exactly once.
 */
export async function auditBatches(
  pool: pg.Pool,
  kafka: Kafka,
  p: FleetPipeline,
): Promise<{ batches: number; replayed: number }> {
  const res = await pool.query<{
    batch_id: string;
    input_rows: number;
    outcomes: Record<string, unknown>;
    progress: { sources: { partition: number; startOffset: number; endOffset: number }[]; replayed: boolean };
  }>(
    `SELECT batch_id, input_rows, outcomes, progress FROM batch_log WHERE pipeline_version_id = $1 ORDER BY batch_id`,
    [p.pipelineVersionId],
  );
  expect(res.rows.map((r) => Number(r.batch_id))).toEqual(res.rows.map((_, i) => i));
  for (const r of res.rows) {
    const total = Object.values(r.outcomes).reduce<number>(
      (sum, v) =>
        sum +
        (typeof v === "number" ? v : Object.values(v as Record<string, number>).reduce((a, b) => a + b, 0)),
      0,
    );
    expect({ batch: r.batch_id, total }).toEqual({ batch: r.batch_id, total: r.input_rows });
  }
  const next = new Map<number, number>();
  for (const r of res.rows) {
    for (const s of r.progress.sources) {
      expect({ batch: r.batch_id, partition: s.partition, start: s.startOffset }).toEqual({
        batch: r.batch_id,
        partition: s.partition,
        start: next.get(s.partition) ?? 0,
      });
      next.set(s.partition, s.endOffset);
    }
  }
  expect(Object.fromEntries([...next].map(([k, v]) => [String(k), v]))).toEqual(
    await topicEnds(kafka, p.topic),
  );
  return { batches: res.rows.length, replayed: res.rows.filter((r) => r.progress.replayed).length };
}

/** A producer per topic: an initial backlog, then a steady rate until `stop()`. */
export async function startProducers(
  kafka: Kafka,
  topics: { topic: string; seed: number; backlog: number; ratePerSecond: number; partitions?: number }[],
) {
  const producers = topics.map((t) => ({
    ...t,
    producer: new PaymentProducer({
      topic: t.topic,
      kafka,
      seed: t.seed,
      duplicateShare: 0.05,
      malformedShare: 0.01,
      outOfOrderShare: 0.05,
      manifest: "ids",
      log: () => undefined,
    }),
  }));
  for (const p of producers) {
    await p.producer.ensureTopic(p.partitions ?? 3);
    await p.producer.produce({ count: p.backlog });
  }
  const abort = new AbortController();
  const running = producers.map((p) =>
    p.producer.run({ ratePerSecond: p.ratePerSecond, signal: abort.signal, progressIntervalMs: 0 }),
  );
  return {
    async stop(): Promise<Map<string, Manifest>> {
      abort.abort();
      await Promise.all(running);
      const manifests = new Map(producers.map((p) => [p.topic, p.producer.manifest()]));
      await Promise.all(producers.map((p) => p.producer.disconnect()));
      return manifests;
    },
  };
}
