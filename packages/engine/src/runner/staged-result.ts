// The result of a batch for a pipeline with several outputs or a join: after the shared phases
// (decode to dedup, batch/process-batch.ts) the join enriches the rows (join/join-operator.ts) and
// every output screens and prepares its own result against its own watermark
// (output/prepare-outputs.ts). What it returns is written in the batch's one transaction
// (store/commit-batch.ts `staged`): the join's state, every output's rows and state, and per output
// its watermark and state size in the checkpoint — all outputs see the batch, or none does.
import type { DeadLetterRow, ExpectationFailure, ProcessedBatch } from "../batch/process-batch";
import type { JoinOperator, JoinReport } from "../join/join-operator";
import type { OpenedOutput } from "../output/open-outputs";
import {
  outputWatermarksOf,
  sharedLateHorizon,
  timeAfterBatch,
  type OutputCheckpoints,
} from "../output/output-time";
import { prepareOutputs, type PreparedOutput } from "../output/prepare-outputs";
import type { OutputProgress } from "../output/output-progress";
import type { CommittedOutputs, LateRows, StagedWrites } from "../store/commit-batch";
import { lateHorizon } from "../batch/watermark";
import type { Checkpoint } from "../store/checkpoint-store";
import type { TCompiledSpec } from "@sluice/pipeline-spec";
import type { PoolClient } from "pg";

export interface Staging {
  compiled: TCompiledSpec;
  outputs: readonly OpenedOutput[];
  join?: JoinOperator;
}

/** Rows before this are late for every output: what the shared phases judge lateness by. */
export function stagedLateBefore(staging: Staging, cp: Pick<Checkpoint, "outputs">): Date | null {
  return sharedLateHorizon(
    staging.outputs.map((o) => o.timing),
    outputWatermarksOf(cp.outputs),
  );
}

export interface StagedInput {
  batchId: number;
  epoch: number;
  topic: string;
  pipelineVersionId: string;
  processed: ProcessedBatch;
  cp: Checkpoint;
  /** From runner/advance-time.ts: the source's event time after this batch, and the newest dedup time. */
  eventTime: Date | null;
  maxDedup: Date | null;
  /** A dead-letter replay batch: no time moves. */
  replay: boolean;
  now: Date;
}

export interface StagedResult {
  /** The batch's outcomes with the join's in-batch dead letters, and every dead letter of the batch. */
  processed: ProcessedBatch;
  watermark: Date | null;
  evictBefore: Date | null;
  /** What the next batch judges lateness by (read ahead, it is processed before this one commits). */
  lateBefore: Date | null;
  /** A `fail` expectation of an output: the batch must not commit. */
  failures: ExpectationFailure[];
  staged: StagedWrites;
  /**
   * Partition groups: the rows an output accepted that are late by that output's watermark as
   * `stored` now (another group moved it since this batch was processed).
   */
  lateBy(stored: OutputCheckpoints): LateRows | undefined;
  /**
   * Partition groups: every watermark this batch commits, from the source time applied onto what the
   * groups committed (`stored`), held by every group's earliest row waiting for the join (`client`:
   * the commit's).
   */
  retime(
    stored: { watermark: Date | null; outputs: OutputCheckpoints },
    source: { eventTime: Date | null; maxDedup: Date | null },
    client: PoolClient,
  ): Promise<{ watermark: Date | null; evictBefore: Date | null; outputs: CommittedOutputs }>;
  /** Complete once the writes have run (an append table's conflicts, state sizes). */
  progress(): { outputs: OutputProgress[]; join?: JoinReport };
  onCommitted(): void;
}

export async function prepareStaged(staging: Staging, input: StagedInput): Promise<StagedResult> {
  const { cp, processed } = input;
  const join = staging.join
    ? await staging.join.prepare(cp.dimension, {
        batchId: input.batchId,
        rows: processed.sinkRows,
        sourceTime: input.replay ? latestSourceTime(cp) : input.eventTime,
        replay: input.replay,
        now: input.now,
      })
    : undefined;
  const timings = staging.outputs.map((o) => o.timing);
  const before = outputWatermarksOf(cp.outputs);
  const time = input.replay
    ? {
        watermark: cp.watermark,
        outputs: before,
        lateHorizon: sharedLateHorizon(timings, before),
        evictBefore: null,
      }
    : timeAfterBatch({
        compiled: staging.compiled,
        timings,
        previous: { watermark: cp.watermark, outputs: before },
        eventTime: input.eventTime,
        heldMinMs: join?.heldMinMs ?? null,
        maxDedupTime: input.maxDedup,
      });
  const prepared = await prepareOutputs(staging.outputs, {
    batchId: input.batchId,
    epoch: input.epoch,
    rows: join ? join.rows : processed.sinkRows,
    before,
    after: time.outputs,
    meta: { topic: input.topic, batchId: input.batchId, pipelineVersionId: input.pipelineVersionId },
  });

  const outcomes = structuredClone(processed.outcomes);
  const failed = join?.failed ?? [];
  outcomes.sink -= failed.length;
  outcomes.deadLetter += failed.length;
  const deadLetters: DeadLetterRow[] = [
    ...processed.deadLetters,
    ...failed,
    ...(join?.deadLetters ?? []),
    ...prepared.outputs.flatMap((o) => o.deadLetters),
  ];

  const deltas = new Map<string, { rows: number; bytes: number }>();
  const evictJoinBefore = earliest(time.lateHorizon, join?.heldMinMs ?? null);
  const writes: StagedWrites["writes"] = [
    ...(join
      ? [(client: Parameters<StagedWrites["writes"][number]>[0]) => join.write(client, evictJoinBefore)]
      : []),
    ...prepared.outputs.map(
      (o) =>
        async (...[client, committed]: Parameters<StagedWrites["writes"][number]>) => {
          const delta = await o.write(
            client,
            committed ? { watermark: committed.get(o.name) ?? null } : undefined,
          );
          deltas.set(o.name, delta);
          return delta;
        },
    ),
  ];
  // Each output's watermark (as committed) and state size added onto what is stored: set by the commit.
  let settled: OutputCheckpoints | undefined;
  const outputCheckpoints = (
    stored: OutputCheckpoints,
    committed: CommittedOutputs | undefined,
  ): OutputCheckpoints =>
    Object.fromEntries(
      prepared.outputs.map((o) => {
        const prev = stored[o.name];
        const d = deltas.get(o.name) ?? { rows: 0, bytes: 0 };
        const watermark = committed ? (committed.get(o.name) ?? null) : o.watermark;
        return [
          o.name,
          {
            watermark: watermark?.toISOString() ?? null,
            stateRows: (prev?.stateRows ?? 0) + d.rows,
            stateBytes: (prev?.stateBytes ?? 0) + d.bytes,
          },
        ];
      }),
    );
  return {
    processed: { ...processed, outcomes, deadLetters },
    watermark: time.watermark,
    evictBefore: time.evictBefore,
    lateBefore: time.lateHorizon,
    failures: prepared.failures,
    staged: {
      writes,
      checkpoint: (stored, committed) => {
        settled = outputCheckpoints(stored.outputs, committed);
        return { outputs: settled, dimension: join ? join.checkpoint(stored.dimension) : stored.dimension };
      },
    },
    lateBy: (stored) => {
      const watermarks = outputWatermarksOf(stored);
      for (const [i, o] of prepared.outputs.entries()) {
        const before = lateHorizon(watermarks.get(o.name) ?? null, timings[i]!.latenessMs);
        if (before && o.earliestAccepted && o.earliestAccepted < before)
          return { earliest: o.earliestAccepted, lateBefore: before, output: o.name };
      }
      return undefined;
    },
    retime: async (stored, source, client) => {
      const t = timeAfterBatch({
        compiled: staging.compiled,
        timings,
        previous: { watermark: stored.watermark, outputs: outputWatermarksOf(stored.outputs) },
        eventTime: source.eventTime,
        heldMinMs: join ? await join.heldMinOfAll(client) : null,
        maxDedupTime: source.maxDedup,
      });
      return { watermark: t.watermark, evictBefore: t.evictBefore, outputs: t.outputs };
    },
    progress: () => {
      const state = settled ?? outputCheckpoints(cp.outputs, undefined);
      return {
        outputs: prepared.outputs.map((o) => progressOf(o, staging, state)),
        ...(join ? { join: join.report } : {}),
      };
    },
    onCommitted: () => {
      for (const o of prepared.outputs) o.onCommitted?.();
    },
  };
}

function progressOf(o: PreparedOutput, staging: Staging, state: OutputCheckpoints): OutputProgress {
  const opened = staging.outputs.find((x) => x.name === o.name)!;
  const sink = opened.compiled.spec.sink!;
  const expectations: Record<string, number> = { ...o.warnings };
  for (const [name, n] of Object.entries(o.outcomes.dropped))
    expectations[name] = (expectations[name] ?? 0) + n;
  const report = o.report;
  return {
    name: o.name,
    sink: sink.postgres?.table ?? "webhook",
    watermark: state[o.name]!.watermark,
    outcomes: o.outcomes,
    lateAccepted: o.lateAccepted,
    expectations,
    stateRows: state[o.name]!.stateRows,
    stateBytes: state[o.name]!.stateBytes,
    ...(report ? { operator: report } : {}),
  };
}

/** A replay batch moves no time: the join decides against the source time the checkpoint has. */
function latestSourceTime(cp: Checkpoint): Date | null {
  const clocks = Object.values(cp.eventTimeMax.partitions ?? {});
  if (clocks.length === 0) return null;
  return new Date(Math.min(...clocks.map((c) => Date.parse(c.max))));
}

function earliest(a: Date | null, bMs: number | null): Date | null {
  if (bMs === null) return a;
  if (!a) return null;
  return a.getTime() <= bMs ? a : new Date(bMs);
}
