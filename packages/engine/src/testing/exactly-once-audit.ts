// One audit of everything "exactly once" means for a ledger pipeline, read back from Postgres after a
// run: the sink holds exactly the expected event ids; committed batches are gap-free, each balances
// (input = sum of outcomes) and together they cover every offset of the topic once — no range read
// twice, none skipped; every batch re-used exactly the range its plan recorded; dead letters are
// written once. Used by the crash, fencing and resume tests so they all prove the same thing.
import type { Kafka } from "kafkajs";
import type pg from "pg";
import { expect } from "vitest";
import type { ManifestCounts } from "@sluice/producer";
import { totalOutcomes, type OutcomeCounts } from "../batch/outcomes";

export interface AuditInput {
  pool: pg.Pool;
  kafka: Kafka;
  topic: string;
  table: string;
  /** The pipeline versions that wrote the sink, oldest first (a later one continues the checkpoint). */
  versionIds: string[];
  expectedIds: Iterable<string>;
  /** Partition groups (source.kafka.parallelism): each group's striped batch ids (g, g+N, …) are gap-free. */
  groups?: number;
  /** When given, the batch outcome totals must match what the producer sent. */
  counts?: Pick<ManifestCounts, "messages" | "duplicates" | "malformed">;
}

interface Source {
  partition: number;
  startOffset: number;
  endOffset: number;
}

export interface AuditedBatch {
  versionId: string;
  batchId: number;
  inputRows: number;
  outcomes: OutcomeCounts;
  progress: { sources: Source[]; replayed: boolean; stateRows: number; durationMs: Record<string, number> };
}

export async function auditExactlyOnce(a: AuditInput): Promise<{ batches: AuditedBatch[] }> {
  const { pool } = a;
  // 1. The sink: every expected id, once, nothing else.
  const sink = await pool.query<{ event_id: string }>(`SELECT event_id FROM "${a.table}"`);
  const stored = sink.rows.map((r) => r.event_id);
  const storedSet = new Set(stored);
  const expected = new Set(a.expectedIds);
  const missing = [...expected].filter((id) => !storedSet.has(id));
  const extra = [...storedSet].filter((id) => !expected.has(id));
  expect({
    rows: stored.length,
    distinct: storedSet.size,
    missing: missing.slice(0, 5),
    extra: extra.slice(0, 5),
  }).toEqual({
    rows: expected.size,
    distinct: expected.size,
    missing: [],
    extra: [],
  });

  // 2. Committed batches: gap-free ids across versions, each balanced.
  const res = await pool.query<{
    pipeline_version_id: string;
    batch_id: string;
    input_rows: number;
    outcomes: OutcomeCounts;
    progress: AuditedBatch["progress"];
  }>(
    `SELECT pipeline_version_id, batch_id, input_rows, outcomes, progress FROM batch_log WHERE pipeline_version_id = ANY($1) ORDER BY batch_id`,
    [a.versionIds],
  );
  const batches: AuditedBatch[] = res.rows.map((r) => ({
    versionId: r.pipeline_version_id,
    batchId: Number(r.batch_id),
    inputRows: r.input_rows,
    outcomes: r.outcomes,
    progress: r.progress,
  }));
  const groups = a.groups ?? 1;
  for (let g = 0; g < groups; g++) {
    const ids = batches.map((b) => b.batchId).filter((id) => id % groups === g);
    const first = groups === 1 ? 0 : (ids[0] ?? g);
    expect({ group: g, ids }).toEqual({ group: g, ids: ids.map((_, i) => first + i * groups) });
  }
  const versionOrder = batches.map((b) => a.versionIds.indexOf(b.versionId));
  expect(versionOrder).toEqual([...versionOrder].sort((x, y) => x - y));
  for (const b of batches)
    expect({ batch: b.batchId, outcomes: totalOutcomes(b.outcomes) }).toEqual({
      batch: b.batchId,
      outcomes: b.inputRows,
    });

  // 3. Offsets: each batch starts where the one before ended, and the last ends at the log end.
  const next = new Map<number, number>();
  for (const b of batches) {
    for (const s of b.progress.sources) {
      expect({ batch: b.batchId, partition: s.partition, start: s.startOffset }).toEqual({
        batch: b.batchId,
        partition: s.partition,
        start: next.get(s.partition) ?? 0,
      });
      next.set(s.partition, s.endOffset);
    }
  }
  const admin = a.kafka.admin();
  await admin.connect();
  const high = await admin.fetchTopicOffsets(a.topic).finally(() => admin.disconnect());
  expect(Object.fromEntries(next)).toEqual(
    Object.fromEntries(high.map((h) => [h.partition, Number(h.high)])),
  );

  // 4. Deterministic replay: each committed batch read exactly the range its plan recorded.
  const plans = await pool.query<{
    pipeline_version_id: string;
    batch_id: string;
    ranges: { partition: number; from: number; to: number }[];
  }>(`SELECT pipeline_version_id, batch_id, ranges FROM offset_log WHERE pipeline_version_id = ANY($1)`, [
    a.versionIds,
  ]);
  const planOf = new Map(plans.rows.map((p) => [`${p.pipeline_version_id}/${p.batch_id}`, p.ranges]));
  for (const b of batches) {
    const plan = planOf.get(`${b.versionId}/${b.batchId}`);
    expect(
      b.progress.sources.map((s) => ({ partition: s.partition, from: s.startOffset, to: s.endOffset })),
    ).toEqual(plan);
  }

  // 5. Totals against what was produced; dead letters written once each.
  const sum = (f: (o: OutcomeCounts) => number) => batches.reduce((s, b) => s + f(b.outcomes), 0);
  const deadLetters = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM dead_letters WHERE pipeline_version_id = ANY($1)`,
    [a.versionIds],
  );
  expect(Number(deadLetters.rows[0]!.n)).toBe(sum((o) => o.deadLetter + o.quarantined + o.late));
  expect(sum((o) => o.sink)).toBe(expected.size);
  if (a.counts) {
    expect({
      input: batches.reduce((s, b) => s + b.inputRows, 0),
      duplicates: sum((o) => o.duplicate),
      malformed: sum((o) => o.deadLetter + o.quarantined),
    }).toEqual({ input: a.counts.messages, duplicates: a.counts.duplicates, malformed: a.counts.malformed });
  }
  return { batches };
}
