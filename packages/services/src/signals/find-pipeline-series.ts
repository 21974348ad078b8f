// Every chart of a pipeline page in one answer: the series of one version (the serving one unless
// another is asked for) over a range, bucketed so no series has more than MAX_POINTS points, plus the
// moments in the range a person needs to read them — lifecycle changes (pause, resume, restart,
// failures) and new versions. Aggregated in Postgres from the 10-second rollups; never batch rows.
import type { PrismaClient } from "@sluice/db";
import { z } from "zod";
import { findPipelineVersion } from "../pipelines/find-pipeline-version";
import {
  queryBatchBuckets,
  queryExpectationBuckets,
  queryOffsetBuckets,
  queryOutputBuckets,
  queryPartitionBuckets,
} from "./rollup-queries";
import { outputSeries, type TOutputSeries } from "./output-series";
import {
  seriesPoints,
  type TExpectationSeries,
  type TPartitionPoint,
  type TSeriesPoint,
} from "./series-points";
import { bucketRange, ZTimeRange } from "./time-range";

export const ZFindPipelineSeriesInput = z.object({
  pipeline: z.string().min(1).max(200),
  /** A version number; the serving version when absent. */
  version: z.number().int().positive().optional(),
  range: ZTimeRange,
});
export type TFindPipelineSeriesInput = z.input<typeof ZFindPipelineSeriesInput>;

export interface TSeriesMarker {
  at: Date;
  kind: "run" | "version";
  /** "pause by user:oona@…: upstream incident", "version 3 registered". */
  label: string;
}

export interface TPipelineSeries {
  pipeline: string;
  /** null when the pipeline has no such version (or none yet). */
  version: number | null;
  from: Date;
  to: Date;
  stepSeconds: number;
  points: TSeriesPoint[];
  partitions: { partition: number; points: TPartitionPoint[] }[];
  expectations: TExpectationSeries[];
  /** A series per output of a pipeline with several outputs (or a join's one); empty otherwise. */
  outputs: TOutputSeries[];
  markers: TSeriesMarker[];
}

/** null when there is no pipeline of that name. */
export async function findPipelineSeries(
  db: PrismaClient,
  input: TFindPipelineSeriesInput,
): Promise<TPipelineSeries | null> {
  const { pipeline, version, range } = ZFindPipelineSeriesInput.parse(input);
  const ref = await findPipelineVersion(db, pipeline, version);
  if (!ref) return null;
  const b = bucketRange(range);
  const empty = { pipeline: ref.pipeline, from: b.from, to: b.to, stepSeconds: b.stepSeconds };
  if (!ref.version)
    return {
      ...empty,
      version: null,
      points: [],
      partitions: [],
      expectations: [],
      outputs: [],
      markers: [],
    };
  const ids = [ref.version.id];
  const [batches, violations, partitions, offsets, outputs, transitions, versions] = await Promise.all([
    queryBatchBuckets(db, ids, b),
    queryExpectationBuckets(db, ids, b),
    queryPartitionBuckets(db, ids, b),
    queryOffsetBuckets(db, ids, b),
    queryOutputBuckets(db, ids, b),
    db.pipelineRunTransition.findMany({
      where: { pipelineVersionId: ref.version.id, createdAt: { gte: b.from, lt: b.to } },
      orderBy: { id: "asc" },
      take: 200,
      select: { action: true, actor: true, reason: true, createdAt: true },
    }),
    db.pipelineVersion.findMany({
      where: { pipelineId: ref.pipelineId, createdAt: { gte: b.from, lt: b.to } },
      select: { version: true, createdAt: true },
    }),
  ]);
  const markers: TSeriesMarker[] = [
    ...transitions.map((t) => ({
      at: t.createdAt,
      kind: "run" as const,
      label: `${t.action} by ${t.actor}${t.reason ? `: ${t.reason}` : ""}`,
    })),
    ...versions.map((v) => ({
      at: v.createdAt,
      kind: "version" as const,
      label: `version ${v.version} registered`,
    })),
  ].sort((x, y) => x.at.getTime() - y.at.getTime());
  return {
    ...empty,
    version: ref.version.version,
    ...seriesPoints(b, { batches, violations, partitions, offsets }),
    outputs: outputSeries(b, outputs),
    markers,
  };
}
