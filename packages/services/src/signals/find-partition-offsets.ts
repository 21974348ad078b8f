// The checkpoint and offsets table: per partition of a version, the committed offset (checkpoint), the
// topic's latest offset (newest offset sample, never behind the committed offset: a sample is up to
// 10 s old, so its age is shown with it), the lag in events and in seconds (÷ the partition's
// read rate over the last 5 minutes), its last data and whether it is idle (newest progress record).
import type { PrismaClient } from "@sluice/db";
import { findCheckpoint } from "@sluice/engine";
import { z } from "zod";
import { prismaSqlClient } from "../change-requests/prisma-sql-client";
import { findPipelineVersion } from "../pipelines/find-pipeline-version";
import { batchProgressView } from "../progress/batch-progress-view";
import { backlogSeconds } from "./offset-signals";
import { CURRENT_SAMPLE_MS, RECENT_RATE_MS } from "./get-pipeline-signals";
import { queryLatestOffsets } from "./rollup-queries";
import { GRAIN_SECONDS } from "./time-range";

export const ZFindPartitionOffsetsInput = z.object({
  pipeline: z.string().min(1).max(200),
  version: z.number().int().positive().optional(),
});
export type TFindPartitionOffsetsInput = z.input<typeof ZFindPartitionOffsetsInput>;

export interface TPartitionOffsets {
  partition: number;
  /** The next offset the version reads (checkpoint); null before it read the partition. */
  committedOffset: number | null;
  /**
   * The topic's log end: the newest offset sample's, or the committed offset when that is further (the
   * sample is up to 10 s old, and the log end is never behind what was read); null without either.
   */
  latestOffset: number | null;
  sampledAt: Date | null;
  /** Where latestOffset comes from: the offset sample, or the checkpoint (the sample was older than the commit). */
  latestFrom: "sample" | "checkpoint" | null;
  lagEvents: number | null;
  lagSeconds: number | null;
  lastDataAt: Date | null;
  idle: boolean | null;
  eventTimeMax: Date | null;
}

export interface TCheckpointView {
  pipeline: string;
  version: number | null;
  lastBatchId: number | null;
  watermark: Date | null;
  updatedAt: Date | null;
  partitions: TPartitionOffsets[];
}

/** null when there is no pipeline of that name. */
export async function findPartitionOffsets(
  db: PrismaClient,
  input: TFindPartitionOffsetsInput,
  now = new Date(),
): Promise<TCheckpointView | null> {
  const { pipeline, version } = ZFindPartitionOffsetsInput.parse(input);
  const ref = await findPipelineVersion(db, pipeline, version);
  if (!ref) return null;
  if (!ref.version)
    return {
      pipeline: ref.pipeline,
      version: null,
      lastBatchId: null,
      watermark: null,
      updatedAt: null,
      partitions: [],
    };
  const pv = ref.version.id;
  const [checkpoint, latest, newest, rates] = await Promise.all([
    findCheckpoint(prismaSqlClient(db), pv),
    queryLatestOffsets(db, [pv], new Date(now.getTime() - CURRENT_SAMPLE_MS)),
    db.batchLog.findFirst({ where: { pipelineVersionId: pv }, orderBy: { batchId: "desc" } }),
    db.partitionRollup.groupBy({
      by: ["partition"],
      where: {
        pipelineVersionId: pv,
        grainSeconds: GRAIN_SECONDS,
        bucketStart: { gte: new Date(now.getTime() - RECENT_RATE_MS) },
      },
      _sum: { rowsRead: true },
    }),
  ]);
  const committed = checkpoint?.endOffsets ?? {};
  const progress = newest ? batchProgressView(newest) : null;
  const ids = new Set<number>([
    ...Object.keys(committed).map(Number),
    ...latest.map((l) => l.partition),
    ...(progress?.partitions.map((p) => p.partition) ?? []),
  ]);
  const partitions = [...ids]
    .sort((a, b) => a - b)
    .map((partition): TPartitionOffsets => {
      const sample = latest.find((l) => l.partition === partition);
      const clock = progress?.partitions.find((p) => p.partition === partition);
      const c = typeof committed[String(partition)] === "number" ? committed[String(partition)]! : null;
      // A sample taken before the last commit can be behind it: the log end is at least what was read,
      // so Committed is never shown ahead of Latest.
      const behind = sample !== undefined && c !== null && c > sample.latest_offset;
      const latestOffset = sample ? (behind ? c : sample.latest_offset) : null;
      const lag = latestOffset === null ? null : Math.max(0, latestOffset - (c ?? 0));
      const rate =
        Number(rates.find((r) => r.partition === partition)?._sum.rowsRead ?? 0) / (RECENT_RATE_MS / 1000);
      return {
        partition,
        committedOffset: c,
        latestOffset,
        sampledAt: sample?.sampled_at ?? null,
        latestFrom: sample ? (behind ? "checkpoint" : "sample") : null,
        lagEvents: lag,
        lagSeconds: backlogSeconds(lag, rate),
        lastDataAt: clock?.lastDataAt ?? null,
        idle: clock?.idle ?? null,
        eventTimeMax: clock?.eventTimeMax ?? null,
      };
    });
  return {
    pipeline: ref.pipeline,
    version: ref.version.version,
    lastBatchId: checkpoint && checkpoint.lastBatchId >= 0 ? checkpoint.lastBatchId : null,
    watermark: checkpoint?.watermark ?? null,
    updatedAt: checkpoint?.updatedAt ?? null,
    partitions,
  };
}
