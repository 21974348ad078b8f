// Runs micro-batches of one pipeline version, one at a time:
//   plan (offset log) → read (exact ranges) → process (decode, contract, expectations, filter, late,
//   dedup) → the result step (a ledger, one operator, or a join and several outputs: result-step.ts)
//   → commit (one fenced transaction).
// Every step that can be interrupted is safe to interrupt: a batch planned but not committed is
// re-run over the same offsets, and a commit either happens entirely or not at all.
// With `source.kafka.parallelism: N` the runner runs one partition group of the version (`group`):
// only that group's partitions, its own lease and striped batch ids (store/group-checkpoint-store.ts),
// alongside the runners of the other groups.
import type { Kafka } from "kafkajs";
import type pg from "pg";
import { compileSpec, contractColumns, type TCompiledSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { dedupKeptBySink } from "../batch/dedup";
import { ConfigurationError, CrossGroupDuplicateError, CrossGroupLateError } from "../errors";
import { processBatch } from "../batch/process-batch";
import type { SchemaDrift } from "../batch/schema-drift";
import { readAhead, type AheadInput, type PreparedBatch, type ReadAhead } from "./read-ahead";
import { advanceTime, NO_INPUT, unchangedTime, type TimedBatch } from "./advance-time";
import type { WebhookTuning } from "./open-result";
import { openResultStep, type ResultStep } from "./result-step";
import { prepareReplayBatch } from "./prepare-replay";
import { planBatch, startingOffsets } from "../plan/plan-batch";
import { KafkaSource, runnerGroupPrefix } from "../source/kafka-source";
import {
  endOffsetsOf,
  sameRanges,
  type OffsetRange,
  type PartitionOffsets,
  type RecordSource,
} from "../source/source";
import {
  acquireLease,
  ensureCheckpoint,
  loadCheckpoint,
  recordStartingOffsets,
  type Checkpoint,
} from "../store/checkpoint-store";
import { findPlannedBatch, recordPlan } from "../store/offset-log-store";
import {
  acquireGroupLease,
  loadGroupCheckpoint,
  recordGroupStartingOffsets,
} from "../store/group-checkpoint-store";
import { batchStride, inGroup, type GroupLease } from "../store/partition-group";
import { readsPartition, readsPartitions } from "../source/partition-filter";
import { commitBatch } from "../store/commit-batch";
import { claimNames } from "../store/sink-claims";
import { loadSinkTables } from "../store/serving-views";
import { lookupSeenKeys, stopForExpectations } from "../store/state-store";
import { sortedIngestTimes } from "./latency";
import { buildProgress } from "./progress";
import type { BatchProgress } from "../store/progress-record";
import type { EngineLogger } from "./engine-logger";

/** What the engine needs from outside; it never reads env or knows about HTTP. */
export interface EngineResources {
  pool: pg.Pool;
  kafka: Kafka;
  logger: EngineLogger;
  now?: () => Date;
}

export interface RunnerOptions {
  pipelineVersionId: string;
  spec: TPipelineSpec;
  /** Who holds the lease, for people reading the checkpoint row (e.g. "host:pid"). */
  owner: string;
  /** Replace the Kafka source (tests, other clients). */
  source?: RecordSource;
  /** Resolves a webhook sink's `urlFromEnv` / `headersFromEnv` (the process entry point reads the environment, not the engine). */
  env?: (name: string) => string | undefined;
  /** Webhook retry tuning: backoff base and cap, requests in flight. */
  webhook?: WebhookTuning;
  /** Read and process the next batch while this one commits (when catching up on a backlog). Default true. */
  readAhead?: boolean;
  /** Replace a join's changelog source (tests). */
  dimensionSource?: RecordSource;
  /** With `source.kafka.parallelism: N` > 1: which partition group (0 … N−1) this runner runs. */
  group?: number;
}

/** `drift`: unknown fields rescued / type mismatches quarantined in the committed batch (batch/schema-drift.ts). */
export type BatchResult =
  { kind: "empty"; backlog: 0 } | { kind: "committed"; progress: BatchProgress; drift?: SchemaDrift };

export class PipelineRunner {
  private lastTriggerAt: number | undefined;
  /** A ledger whose table keeps its dedup keys (batch/dedup.ts): it commits none and looks up only handed ones (seenKeys). */
  private readonly keysInSink: boolean;
  /** The next batch, being read and processed while the current one commits (never rejects). */
  private ahead: Promise<ReadAhead | undefined> | undefined;

  private constructor(
    private readonly res: EngineResources,
    private readonly opts: RunnerOptions,
    private readonly compiled: TCompiledSpec,
    private readonly step: ResultStep,
    private readonly source: RecordSource,
    /** The runner's epoch, or its partition group's lease. */
    private readonly lease: number | GroupLease,
    /** A partition group: the other groups' partitions and their offsets now. */
    private readonly otherPartitions?: () => Promise<PartitionOffsets[]>,
  ) {
    this.keysInSink = dedupKeptBySink(compiled.spec) !== undefined;
  }

  private get epoch(): number {
    return this.groupLease?.epoch ?? (this.lease as number);
  }

  /** The partition group's lease; undefined for a runner of the whole version. */
  private get groupLease(): GroupLease | undefined {
    return typeof this.lease === "number" ? undefined : this.lease;
  }

  /** Prepare the sink tables (or the operators, the join) and checkpoint, and take the lease (fencing off any other runner). */
  static async open(res: EngineResources, opts: RunnerOptions): Promise<PipelineRunner> {
    const { spec } = opts;
    const compiled = compileSpec(spec);
    const group = partitionGroup(spec, opts.group);
    const step = await openResultStep(
      {
        pool: res.pool,
        kafka: res.kafka,
        pipelineVersionId: opts.pipelineVersionId,
        sinkTables: await loadSinkTables(res.pool, opts.pipelineVersionId),
        ...(opts.env ? { env: opts.env } : {}),
        ...(opts.webhook ? { webhook: opts.webhook } : {}),
        ...(opts.dimensionSource ? { dimensionSource: opts.dimensionSource } : {}),
        ...(group ? { group } : {}),
      },
      compiled,
    );
    await ensureCheckpoint(res.pool, opts.pipelineVersionId);
    const lease = group
      ? await acquireGroupLease(res.pool, opts.pipelineVersionId, group, opts.owner)
      : await acquireLease(res.pool, opts.pipelineVersionId, opts.owner);
    const topic =
      opts.source ??
      new KafkaSource({
        kafka: res.kafka,
        topic: spec.source.kafka.topic,
        groupPrefix: runnerGroupPrefix(opts.pipelineVersionId, group?.no),
      });
    const only = spec.source.kafka.partitions ? { only: spec.source.kafka.partitions } : {};
    const source = readsPartitions(topic, { ...only, ...(group ? { group } : {}) });
    // A group's commit asks which of the other groups' partitions hold records they have not read.
    const others = group
      ? async () => {
          const theirs = readsPartition(only);
          return (await topic.partitionOffsets()).filter(
            (p) => theirs(p.partition) && !inGroup(p.partition, group),
          );
        }
      : undefined;
    return new PipelineRunner(res, opts, compiled, step, source, lease, others);
  }

  get leaseEpoch(): number {
    return this.epoch;
  }

  async close(): Promise<void> {
    await this.dropAhead();
    await this.source.close();
    await this.step.close();
  }

  /**
   * Run the next micro-batch. Throws FencedError if another runner took over. A partition group's
   * batch that met another group's commit of the same keys (or a deadlock on them) rolled back: it
   * runs again — the same recorded ranges — against what that group committed.
   */
  async runBatch(): Promise<BatchResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.runOneBatch();
      } catch (err) {
        if (!this.groupLease || attempt >= MAX_GROUP_RETRIES || !crossedAnotherGroup(err)) throw err;
        this.res.logger.info(
          { err: (err as Error).message, attempt },
          "partition group batch met another group's commit (the same keys, or a watermark that makes rows late); running it again",
        );
      }
    }
  }

  private async runOneBatch(): Promise<BatchResult> {
    const { pool } = this.res;
    const { pipelineVersionId } = this.opts;
    const { spec } = this.compiled;
    const now = () => (this.res.now ? this.res.now() : new Date());
    const triggerAt = Date.now();

    // 1–4. checkpoint; then the batch read and processed ahead during the previous commit, or plan
    // (re-using a planned-but-uncommitted range), read and process it now.
    const group = this.groupLease;
    const grouped = group ? await loadGroupCheckpoint(pool, pipelineVersionId, group.group) : undefined;
    const cp = grouped ?? (await loadCheckpoint(pool, pipelineVersionId));
    // Dead letters someone asked to replay go first, in a batch of their own.
    const batch =
      (await this.prepareReplay(cp)) ?? (await this.takeAhead(cp)) ?? (await this.prepareBatch(cp));
    if (!batch) return { kind: "empty", backlog: 0 };
    const { batchId, ranges, records, processed } = batch;
    if (processed.failures.length > 0)
      await stopForExpectations(pool, pipelineVersionId, batchId, processed.failures);
    let t = Date.now();
    // A replay batch moves no time: its rows are old, and the watermark follows the source's partitions,
    // so it keeps the checkpoint's watermark, event-time clocks and dedup horizon exactly.
    // A group judges its time as its commit will: other groups' partitions with unread records hold it.
    const others = grouped ? await this.unreadElsewhere(grouped.versionEndOffsets) : undefined;
    const time = batch.deadLetterReplay
      ? unchangedTime(cp)
      : this.advanceTime(cp, processed, now(), others?.unread);
    const { eventTimeMax, partitionEventTime } = time;
    // Where the rows go — a ledger, one operator, or a join and several outputs: prepared before the
    // transaction, written inside it.
    const step = await this.step.prepare({
      batchId,
      epoch: this.epoch,
      processed,
      cp,
      time,
      replay: batch.deadLetterReplay !== undefined,
      now: now(),
    });
    if (step.failures.length > 0) await stopForExpectations(pool, pipelineVersionId, batchId, step.failures);
    const { watermark, evictBefore } = step;
    const processMs = batch.phases.process + (Date.now() - t);

    // 5. one fenced transaction.
    t = Date.now();
    const sincePrevious = this.lastTriggerAt === undefined ? undefined : triggerAt - this.lastTriggerAt;
    // Sorted before the transaction; the progress record only subtracts the commit instant from them.
    const sortedIngest = sortedIngestTimes(records.map((r) => r.timestamp));
    const commit = commitBatch(pool, {
      pipelineVersionId,
      batchId,
      epoch: this.epoch,
      topic: spec.source.kafka.topic,
      sinkClaims: claimNames(spec),
      ...step.commit,
      ranges,
      inputRows: records.length,
      // A ledger whose table keeps its keys commits none to dedup state (its lookups: seenKeys).
      processed: this.keysInSink ? { ...step.processed, dedupInserts: [] } : step.processed,
      watermark,
      eventTimeMax,
      evictBefore,
      ...(batch.deadLetterReplay ? { replay: batch.deadLetterReplay } : {}),
      ...(group && others
        ? {
            group: {
              lease: group,
              // Applied onto the version's time as committed by then (other groups' partitions moved it).
              // A partition of another group with records past the version's offsets holds the
              // watermark even when no batch read it lately: that group is behind, or down.
              // Rows another group's commit since made late: the commit runs the batch again (not a replay's rows: admitted late).
              lateBy: (stored) => (batch.deadLetterReplay ? undefined : step.lateBy(stored)),
              retime: async (stored, client) => {
                const t = batch.deadLetterReplay
                  ? unchangedTime(stored)
                  : this.advanceTime(stored, processed, now(), others.unreadPast(stored.endOffsets));
                return { eventTimeMax: t.eventTimeMax, ...(await step.retime(stored, t, client)) };
              },
            },
          }
        : {}),
      progress: (outcomes, state, committedWatermark) =>
        buildProgress({
          batchId,
          pipelineVersionId,
          ranges,
          partitions: batch.partitions,
          skippedOffsets: batch.skipped,
          inputRows: records.length,
          phases: {
            plan: batch.phases.plan,
            read: batch.phases.read,
            process: processMs,
            commit: Date.now() - t,
          },
          wallMs: Date.now() - triggerAt,
          sincePreviousTriggerMs: sincePrevious,
          watermark: committedWatermark,
          eventTimeMax: eventTimeMax.eventTime ? new Date(eventTimeMax.eventTime) : null,
          state,
          outcomes,
          warnings: processed.warnings,
          replayed: batch.replayed,
          ...(batch.deadLetterReplay
            ? { deadLetterReplay: { replayIds: batch.deadLetterReplay.plan.replayIds, rows: records.length } }
            : {}),
          preparedAhead: batch.preparedAhead,
          ...(group ? { group: group.group } : {}),
          now: now(),
          partitionEventTime,
          sortedIngest,
          ...step.progress(),
        }),
    });
    // While Postgres commits this batch, read and process the next one (when a full batch is waiting).
    // Its operator step (windows, CDC, webhook, a join and outputs) waits for its turn: that reads the committed state.
    if (this.opts.readAhead !== false)
      this.ahead = readAhead(
        this.aheadInput(batch, cp, {
          endOffsets: { ...cp.endOffsets, ...endOffsetsOf(ranges) },
          watermark,
          evictBefore,
          ...(step.lateBefore !== undefined ? { lateBefore: step.lateBefore } : {}),
        }),
      );
    let committed;
    try {
      committed = await commit;
    } catch (err) {
      await this.dropAhead();
      throw err;
    }
    step.onCommitted();
    this.lastTriggerAt = triggerAt;
    return {
      kind: "committed",
      progress: committed.progress,
      ...(processed.drift ? { drift: processed.drift } : {}),
    };
  }

  /** Plan (or re-use the recorded plan of) the batch after the checkpoint, read it and process it. */
  private async prepareBatch(cp: Checkpoint): Promise<PreparedBatch | undefined> {
    const { pool } = this.res;
    const { pipelineVersionId } = this.opts;
    const { spec } = this.compiled;
    let t = Date.now();
    const batchId = cp.lastBatchId + batchStride(this.lease);
    const partitions = await this.source.partitionOffsets();
    const replan = await findPlannedBatch(pool, pipelineVersionId, batchId);
    let ranges: OffsetRange[];
    let skipped: Record<string, number> = {};
    if (replan) {
      // A replay batch recorded meanwhile (only by a runner that has since taken over): its turn is next.
      if (replan.replay) return undefined;
      ranges = replan.ranges;
    } else {
      const plan = planBatch({
        committedEnd: await this.startingPoint(cp, partitions),
        partitions,
        maxOffsetsPerTrigger: spec.source.kafka.maxOffsetsPerTrigger,
      });
      // With nothing to read, the time a batch without input would commit: asked at most once here.
      let idle: ReturnType<PipelineRunner["timeWithoutInput"]> | undefined;
      const timeWithoutInput = () => (idle ??= this.timeWithoutInput(cp));
      if (
        plan.ranges.every((r) => r.to === r.from) &&
        !(await this.idleReleasesWatermark(cp, timeWithoutInput)) &&
        !(await this.step.hasOtherInput(cp, async () => (await timeWithoutInput()).eventTime))
      )
        return undefined;
      skipped = plan.skipped;
      const recorded = await recordPlan(pool, pipelineVersionId, batchId, this.lease, plan.ranges);
      if (recorded.replay) return undefined;
      ranges = recorded.ranges;
    }
    const plan = Date.now() - t;

    t = Date.now();
    const records = await this.source.read(ranges);
    const read = Date.now() - t;

    t = Date.now();
    const lateBefore = this.step.lateBefore(cp);
    const processed = await processBatch(records, {
      compiled: this.compiled,
      columns: contractColumns(spec),
      watermark: cp.watermark,
      ...(lateBefore !== undefined ? { lateBefore } : {}),
      lookupSeenKeys: this.seenKeys(cp),
    });
    return {
      batchId,
      ranges,
      skipped,
      partitions,
      records,
      processed,
      replayed: replan !== undefined,
      preparedAhead: false,
      phases: { plan, read, process: Date.now() - t },
    };
  }

  /** A dead-letter replay batch, when items are pending for this version (runner/prepare-replay.ts). */
  private async prepareReplay(cp: Checkpoint): Promise<PreparedBatch | undefined> {
    // Partition groups: group 0 alone applies replays, so two groups never apply the same items.
    if (this.groupLease && this.groupLease.group.no !== 0) return undefined;
    return prepareReplayBatch(
      {
        pool: this.res.pool,
        pipelineVersionId: this.opts.pipelineVersionId,
        compiled: this.compiled,
        lease: this.lease,
        lateBefore: this.step.lateBefore(cp),
        dropAhead: () => this.dropAhead(),
      },
      cp,
    );
  }

  private aheadInput(batch: PreparedBatch, cp: Checkpoint, after: AheadInput["after"]): AheadInput {
    return {
      batchId: batch.batchId + batchStride(this.lease),
      previousBatchId: batch.batchId,
      ...(this.groupLease ? { watermarkMayMoveOn: true } : {}),
      after,
      source: this.source,
      compiled: this.compiled,
      pendingKeys: batch.processed.dedupInserts,
      lookupCommitted: this.seenKeys(cp),
      logger: this.res.logger,
    };
  }

  /**
   * Which of a batch's dedup keys dedup state holds (not before `notBefore`, when given). A ledger
   * whose table keeps its keys looks up only what a predecessor handed it (store/dedup-from-table.ts),
   * until that is evicted: its state then stays empty — it never adds keys — and the table refuses
   * repeats on its own, so there is nothing to ask.
   */
  private seenKeys(cp: Checkpoint): (keys: string[], notBefore?: Date | null) => Promise<Set<string>> {
    if (this.keysInSink && cp.stateRows === 0) return async () => new Set();
    const { pool } = this.res;
    const { pipelineVersionId } = this.opts;
    return (keys, notBefore = null) => lookupSeenKeys(pool, pipelineVersionId, keys, notBefore);
  }

  /**
   * The batch read ahead during the previous commit, if it is still the right next batch: the
   * checkpoint is the one that commit was to write. Its plan is recorded now, before it can commit
   * (fenced like any plan); a plan someone else recorded for that batch id wins over it.
   */
  private async takeAhead(cp: Checkpoint): Promise<PreparedBatch | undefined> {
    const ahead = await this.ahead;
    this.ahead = undefined;
    if (!ahead || !ahead.matches(cp)) return undefined;
    const t = Date.now();
    const { pool } = this.res;
    const recorded = await recordPlan(
      pool,
      this.opts.pipelineVersionId,
      ahead.batch.batchId,
      this.lease,
      ahead.batch.ranges,
    );
    if (recorded.replay || !sameRanges(recorded.ranges, ahead.batch.ranges)) return undefined;
    return {
      ...ahead.batch,
      phases: { ...ahead.batch.phases, plan: ahead.batch.phases.plan + (Date.now() - t) },
    };
  }

  private async dropAhead(): Promise<void> {
    await this.ahead;
    this.ahead = undefined;
  }

  /**
   * With no new input, whether a batch without data should still run: partitions that went idle since
   * the last batch stop holding the watermark back, so it moves on — and with it windows are finalized
   * (append mode) and state behind it is evicted. Without this, the last windows of a topic that went
   * quiet would wait for the next record. Like Spark's no-data micro-batches; at most one per change.
   */
  private async idleReleasesWatermark(
    cp: Checkpoint,
    timeWithoutInput: () => ReturnType<PipelineRunner["timeWithoutInput"]>,
  ): Promise<boolean> {
    if (this.compiled.timing.watermarkDelayMs === undefined) return false;
    const { watermark } = await timeWithoutInput();
    return watermark !== null && (cp.watermark === null || watermark > cp.watermark);
  }

  /** The time a batch without input would commit now. A group's partitions going idle release nothing while another group's hold unread records. */
  private async timeWithoutInput(cp: Checkpoint) {
    const others = this.otherPartitions
      ? await this.unreadElsewhere(
          (await loadCheckpoint(this.res.pool, this.opts.pipelineVersionId)).endOffsets,
        )
      : undefined;
    return this.advanceTime(cp, NO_INPUT, this.res.now ? this.res.now() : new Date(), others?.unread);
  }

  /**
   * Where the next plan starts: the checkpoint's offsets. A version that has read nothing yet records
   * its start first when the spec says `latest` (the log end now), so it starts "from now" once — a
   * restart before its first batch still starts there — and reads every new record from then on.
   */
  private async startingPoint(
    cp: Checkpoint,
    partitions: PartitionOffsets[],
  ): Promise<Record<string, number>> {
    if (cp.lastBatchId >= 0 || Object.keys(cp.endOffsets).length > 0) return cp.endOffsets;
    const start = startingOffsets(this.compiled.spec.source.kafka.startingOffsets, partitions);
    if (!start) return cp.endOffsets;
    return this.groupLease
      ? recordGroupStartingOffsets(this.res.pool, this.opts.pipelineVersionId, this.groupLease, start)
      : recordStartingOffsets(this.res.pool, this.opts.pipelineVersionId, this.epoch, start);
  }

  /**
   * Partition groups: the other groups' partitions now, and which hold records past the version's
   * offsets (`versionEnd`, or offsets given later, at the commit) — unread, they hold the watermark.
   * Undefined for a runner of the whole version.
   */
  private async unreadElsewhere(versionEnd: Record<string, number>) {
    if (!this.otherPartitions) return undefined;
    const partitions = await this.otherPartitions();
    const unreadPast = (committed: Record<string, number>) =>
      new Set(
        partitions.filter((p) => p.high > (committed[String(p.partition)] ?? p.low)).map((p) => p.partition),
      );
    return { unread: unreadPast(versionEnd), unreadPast };
  }

  private advanceTime(
    cp: Pick<Checkpoint, "watermark" | "eventTimeMax">,
    processed: TimedBatch,
    now: Date,
    unread?: ReadonlySet<number>,
  ) {
    return advanceTime(this.compiled, cp, processed, now, unread);
  }
}

/** Runs of one batch: a cross-group conflict is rare (a duplicate straddling two groups' batches), so a few suffice. */
const MAX_GROUP_RETRIES = 5;

/** The earliest event time among rows (null without an event-time column or rows). */
/**
 * Another group committed this batch's dedup keys meanwhile, or a watermark that makes some of its rows
 * late, or Postgres broke a lock cycle between the two.
 */
function crossedAnotherGroup(err: unknown): boolean {
  if (err instanceof CrossGroupDuplicateError || err instanceof CrossGroupLateError) return true;
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "40P01";
}

/**
 * The partition group a runner of this spec runs: none with parallelism 1; required (0 … N−1) above.
 * A ConfigurationError says what to give (`sluice run` checks it before it registers anything).
 */
export function partitionGroup(spec: TPipelineSpec, group: number | undefined) {
  const of = spec.source.kafka.parallelism ?? 1;
  if (of === 1) {
    if (group !== undefined && group !== 0)
      throw new ConfigurationError(
        `${spec.name} has no partition groups (source.kafka.parallelism is 1): run it without a group`,
      );
    return undefined;
  }
  if (group === undefined || !Number.isInteger(group) || group < 0 || group >= of)
    throw new ConfigurationError(
      `${spec.name} reads its partitions in ${of} groups (source.kafka.parallelism: ${of}): run one runner per group, 0 to ${of - 1} (sluice run --group <g>)`,
    );
  return { no: group, of };
}
