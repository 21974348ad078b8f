// A dead-letter replay batch (docs/engine.md, "Replaying dead letters"): when items are pending for
// this version, the next batch id with no Kafka range. Its plan (the item ids) is recorded like any
// plan, so a crash re-runs exactly those items; a Kafka range planned but not committed re-runs first.
// The records are the dead letters' raw bytes with their original partition, offset, key and
// timestamp, processed like any input against the committed watermark and dedup state — a row behind
// the late horizon is late again, a key already seen a duplicate — so a replay never double counts and
// never moves time. A join's `dimension_missing` row was admitted once (on time, not a duplicate): it
// skips both checks and goes to the join again.
import type pg from "pg";
import { contractColumns, type TCompiledSpec } from "@sluice/pipeline-spec";
import { processBatch } from "../batch/process-batch";
import type { Checkpoint } from "../store/checkpoint-store";
import { findPlannedBatch, recordPlan } from "../store/offset-log-store";
import {
  loadReplayItems,
  MAX_REPLAY_ROWS,
  pendingReplayItems,
  type ReplayItemResult,
} from "../store/replay-store";
import { lookupSeenKeys } from "../store/state-store";
import type { PreparedBatch } from "./read-ahead";
import { batchStride, type GroupLease } from "../store/partition-group";

export interface ReplayContext {
  pool: pg.Pool;
  pipelineVersionId: string;
  compiled: TCompiledSpec;
  /** The runner's lease: its epoch, or its partition group's lease (replays go to group 0 only). */
  lease: number | GroupLease;
  /** What the result step judges lateness by (undefined: the watermark minus allowedLateness). */
  lateBefore: Date | null | undefined;
  /** Drops the batch read ahead: the replay batch takes its batch id. */
  dropAhead(): Promise<void>;
}

export async function prepareReplayBatch(
  ctx: ReplayContext,
  cp: Checkpoint,
): Promise<PreparedBatch | undefined> {
  const { pool, pipelineVersionId } = ctx;
  const t = Date.now();
  const limit = Math.min(MAX_REPLAY_ROWS, ctx.compiled.spec.source.kafka.maxOffsetsPerTrigger);
  const pending = await pendingReplayItems(pool, pipelineVersionId, limit);
  if (!pending) return undefined;
  const batchId = cp.lastBatchId + batchStride(ctx.lease);
  const found = await findPlannedBatch(pool, pipelineVersionId, batchId);
  const planned = found ?? (await recordPlan(pool, pipelineVersionId, batchId, ctx.lease, [], pending));
  if (!planned.replay) return undefined;
  await ctx.dropAhead();
  const plan = Date.now() - t;
  const read0 = Date.now();
  const items = await loadReplayItems(pool, pipelineVersionId, planned.replay);
  const read = Date.now() - read0;
  const process0 = Date.now();
  const verdicts = new Map<number, { outcome: ReplayItemResult["outcome"]; detail: string | null }>();
  const run = (batchItems: typeof items) => {
    const itemOf = new Map(batchItems.map((i) => [i.record, i]));
    verdicts.clear();
    const failing: ReplayItemResult[] = [];
    const promise = processBatch(
      batchItems.map((i) => i.record),
      {
        compiled: ctx.compiled,
        columns: contractColumns(ctx.compiled.spec),
        watermark: cp.watermark,
        // A join's dimension_missing row passed the late check and dedup when it was read: without
        // this, its own dedup entry would make the replay a duplicate and it would never be joined.
        admitted: new Set(batchItems.filter((i) => i.admitted).map((i) => i.record)),
        lookupSeenKeys: (keys) => lookupSeenKeys(pool, pipelineVersionId, keys),
        trace: (record, verdict) => {
          const item = itemOf.get(record)!;
          verdicts.set(item.itemId, { outcome: verdict.outcome, detail: verdict.reason ?? null });
          const stop = verdict.expectations?.find((e) => e.action === "fail" && !e.passed);
          if (stop)
            failing.push({
              itemId: item.itemId,
              outcome: "refused",
              detail: `violates expectation "${stop.name}" (action: fail): not replayed`,
              againDeadLetterId: null,
            });
        },
      },
    );
    return promise.then((processed) => ({ processed, failing }));
  };
  // A replayed row that violates a `fail` expectation would stop the pipeline on every re-run of
  // this plan: it is left out (its dead letter stays, the item says why) and the rest is processed again.
  const first = await run(items);
  const failing = first.failing;
  let { processed } = first;
  let applied = items;
  if (failing.length > 0) {
    const left = new Set(failing.map((f) => f.itemId));
    applied = items.filter((i) => !left.has(i.itemId));
    ({ processed } = await run(applied));
  }
  return {
    batchId,
    ranges: [],
    skipped: {},
    partitions: [],
    records: applied.map((i) => i.record),
    processed,
    replayed: found !== undefined,
    preparedAhead: false,
    phases: { plan, read, process: Date.now() - process0 },
    deadLetterReplay: { plan: planned.replay, items: applied, verdicts, refused: failing },
  };
}
