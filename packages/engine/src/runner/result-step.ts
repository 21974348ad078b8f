// The step of a batch between the shared phases (decode → dedup) and the commit: where the rows go.
// A pipeline with one sink and no join writes its ledger or runs its one operator (windows, CDC, a
// webhook) — `direct`. A pipeline with several outputs or a join runs the join and every output
// (runner/staged-result.ts) — `staged`. Either way the step prepares before the transaction and hands
// commit-batch what it writes inside it, with the watermark and dedup horizon the batch commits.
import type pg from "pg";
import type { Kafka } from "kafkajs";
import { isPipelineDimension, type TCompiledSpec } from "@sluice/pipeline-spec";
import type { ExpectationFailure, ProcessedBatch } from "../batch/process-batch";
import { DimensionReader } from "../join/dimension-reader";
import type { DimensionFeed } from "../join/dimension-feed";
import { JoinOperator } from "../join/join-operator";
import { PipelineDimensionFeed } from "../join/pipeline-dimension-feed";
import { openResult, type ResultContext } from "./open-result";
import { applyPrepared, type CommittedWatermark } from "../operator/result-operator";
import { openOutputs } from "../output/open-outputs";
import { KafkaSource } from "../source/kafka-source";
import type { RecordSource } from "../source/source";
import type { Checkpoint } from "../store/checkpoint-store";
import type { CommitInput, CommittedTime, LateRows, StoredTime } from "../store/commit-batch";
import { earliestEventTime, lateHorizon } from "../batch/watermark";
import { outputWatermarksOf } from "../output/output-time";
import type { ProgressInput } from "./progress";
import { prepareStaged, stagedLateBefore, type Staging } from "./staged-result";

export interface StepInput {
  batchId: number;
  epoch: number;
  processed: ProcessedBatch;
  cp: Checkpoint;
  /** From advance-time (a replay batch: the checkpoint's, unchanged). */
  time: { watermark: Date | null; evictBefore: Date | null; eventTime: Date | null; maxDedup: Date | null };
  replay: boolean;
  now: Date;
}

export interface PreparedStep {
  processed: ProcessedBatch;
  watermark: Date | null;
  evictBefore: Date | null;
  /** What the next batch judges lateness by (undefined: its watermark minus allowedLateness). */
  lateBefore: Date | null | undefined;
  /** An output's `fail` expectation: the batch must not commit. */
  failures: ExpectationFailure[];
  commit: Pick<CommitInput, "sink" | "operatorWrite" | "staged">;
  /**
   * Partition groups, in the commit under the version's lock: the rows this batch accepted that are
   * late by the watermark(s) `stored` now — another group's commit moved them since it was processed.
   */
  lateBy(stored: StoredTime): LateRows | undefined;
  /**
   * Partition groups, likewise: the watermarks this batch commits — the source's time after it
   * (`time`, re-derived by the runner from the stored clocks) applied onto what is `stored`.
   */
  retime(
    stored: StoredTime,
    time: StepInput["time"],
    client: pg.PoolClient,
  ): Promise<Omit<CommittedTime, "eventTimeMax">>;
  /** The step's part of the progress record (complete once the commit's writes ran). */
  progress(): Pick<ProgressInput, "operator" | "outputs" | "join" | "lateAccepted">;
  onCommitted(): void;
}

export interface ResultStep {
  /** Rows before this are late in the batch after `cp` (undefined: watermark minus allowedLateness). */
  lateBefore(cp: Checkpoint): Date | null | undefined;
  prepare(input: StepInput): Promise<PreparedStep>;
  /**
   * Input besides the source's that a batch should be run for: a join's unread changelog, or (partition
   * groups) its waiting rows released by what other groups committed. `sourceTime`: the source's event
   * time with no new input.
   */
  hasOtherInput(cp: Checkpoint, sourceTime: () => Promise<Date | null>): Promise<boolean>;
  close(): Promise<void>;
}

export interface StepContext extends ResultContext {
  kafka: Kafka;
  /** Replace the join's changelog source (tests). */
  dimensionSource?: RecordSource;
}

export async function openResultStep(ctx: StepContext, compiled: TCompiledSpec): Promise<ResultStep> {
  const { spec } = compiled;
  if (spec.outputs || spec.join) {
    const feed = spec.join && dimensionFeed(ctx, compiled, spec.join.dimension);
    const staging: Staging = {
      compiled,
      outputs: await openOutputs(ctx, spec),
      ...(feed ? { join: new JoinOperator(ctx.pool, ctx.pipelineVersionId, compiled, feed, ctx.group) } : {}),
    };
    return stagedStep(staging, ctx);
  }
  return directStep(await openResult(ctx, compiled), compiled);
}

/** A changelog the pipeline reads itself, or another pipeline's committed SCD2 history. */
function dimensionFeed(
  ctx: StepContext,
  compiled: TCompiledSpec,
  dim: NonNullable<TCompiledSpec["spec"]["join"]>["dimension"],
): DimensionFeed {
  if (isPipelineDimension(dim)) return new PipelineDimensionFeed(ctx.pool, dim);
  const source =
    ctx.dimensionSource ??
    new KafkaSource({
      kafka: ctx.kafka,
      topic: dim.kafka.topic,
      groupPrefix: `${ctx.pipelineVersionId}.dimension`,
    });
  return new DimensionReader(source, dim, compiled);
}

function directStep(result: Awaited<ReturnType<typeof openResult>>, compiled: TCompiledSpec): ResultStep {
  return {
    lateBefore: () => undefined,
    hasOtherInput: async () => false,
    close: async () => undefined,
    async prepare(input) {
      const { operator, sink } = result;
      const { watermark, evictBefore } = input.time;
      const prepared = operator
        ? await operator.prepare({
            batchId: input.batchId,
            epoch: input.epoch,
            rows: input.processed.sinkRows,
            watermark,
          })
        : undefined;
      return {
        processed: prepared ? applyPrepared(input.processed, prepared) : input.processed,
        watermark,
        evictBefore,
        lateBefore: undefined,
        failures: [],
        commit: {
          ...(sink ? { sink } : {}),
          ...(prepared
            ? {
                operatorWrite: (client: pg.PoolClient, committed: CommittedWatermark) =>
                  prepared.write(client, committed),
              }
            : {}),
        },
        lateBy: (stored) => {
          const earliest = earliestEventTime(input.processed.sinkRows, compiled.spec.eventTime?.column);
          const lateBefore = lateHorizon(stored.watermark, compiled.timing.allowedLatenessMs);
          return earliest && lateBefore && earliest < lateBefore ? { earliest, lateBefore } : undefined;
        },
        retime: async (_stored, time) => ({ watermark: time.watermark, evictBefore: time.evictBefore }),
        progress: () => ({
          lateAccepted: input.processed.lateAccepted,
          ...(prepared ? { operator: prepared.report } : {}),
        }),
        onCommitted: () => prepared?.onCommitted?.(),
      };
    },
  };
}

function stagedStep(staging: Staging, ctx: StepContext): ResultStep {
  return {
    lateBefore: (cp) => stagedLateBefore(staging, cp),
    hasOtherInput: async (cp, sourceTime) =>
      staging.join ? staging.join.hasOtherInput(cp.dimension, sourceTime) : false,
    close: async () => staging.join?.close(),
    async prepare(input) {
      const r = await prepareStaged(staging, {
        batchId: input.batchId,
        epoch: input.epoch,
        topic: staging.compiled.spec.source.kafka.topic,
        pipelineVersionId: ctx.pipelineVersionId,
        processed: input.processed,
        cp: input.cp,
        eventTime: input.time.eventTime,
        maxDedup: input.time.maxDedup,
        replay: input.replay,
        now: input.now,
      });
      return {
        processed: r.processed,
        watermark: r.watermark,
        evictBefore: r.evictBefore,
        lateBefore: r.lateBefore,
        failures: r.failures,
        commit: { staged: r.staged },
        lateBy: (stored) => r.lateBy(stored.outputs),
        // A replay batch moves no time: every output keeps the watermark stored.
        retime: async (stored, time, client) =>
          input.replay
            ? { watermark: stored.watermark, evictBefore: null, outputs: outputWatermarksOf(stored.outputs) }
            : r.retime(stored, time, client),
        progress: () => r.progress(),
        onCommitted: () => r.onCommitted(),
      };
    },
  };
}
