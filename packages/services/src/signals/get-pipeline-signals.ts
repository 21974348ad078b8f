// A pipeline page's header signals over a range: freshness, completeness and correctness against the
// version's targets, the range's totals, and the graph with its edge counts (pipeline-flow.ts).
import type { PrismaClient } from "@sluice/db";
import { findCheckpoint, outcomeColumn, perOutcome } from "@sluice/engine";
import { resolveTargets, ZTargets, type TResolvedTargets } from "@sluice/pipeline-spec";
import { z } from "zod";
import { prismaSqlClient } from "../change-requests/prisma-sql-client";
import { findPipelineVersion } from "../pipelines/find-pipeline-version";
import { pipelineFlow, ZFlowSpec, type TFlowTotals, type TPipelineFlow } from "./pipeline-flow";
import { queryJoinTotals } from "./join-totals";
import { sampleOf } from "./offset-signals";
import {
  queryLatestOffsets,
  queryNewestIngest,
  queryRangeTotals,
  type TRangeTotalsRow,
} from "./rollup-queries";
import {
  completenessOf,
  correctnessOf,
  freshnessOf,
  type TCompleteness,
  type TCorrectness,
  type TFreshness,
} from "./signal-values";
import { ZTimeRange } from "./time-range";

export const ZGetPipelineSignalsInput = z.object({
  pipeline: z.string().min(1).max(200),
  version: z.number().int().positive().optional(),
  range: ZTimeRange,
});
export type TGetPipelineSignalsInput = z.input<typeof ZGetPipelineSignalsInput>;

export interface TPipelineSignals {
  pipeline: string;
  version: number | null;
  from: Date;
  to: Date;
  targets: TResolvedTargets;
  freshness: TFreshness;
  completeness: TCompleteness;
  correctness: TCorrectness;
  totals: TFlowTotals & { batches: number };
  flow: TPipelineFlow;
}

/** Offset samples older than this do not count as "now" (the workers sample every few seconds). */
export const CURRENT_SAMPLE_MS = 60_000;
/** The window of the "recent" processing rate that backlog-in-seconds divides by. */
export const RECENT_RATE_MS = 5 * 60_000;

const ZSpecTargets = z.object({ targets: ZTargets.optional().catch(undefined) });

export function targetsOf(spec: unknown): TResolvedTargets {
  const parsed = ZSpecTargets.safeParse(spec);
  return resolveTargets(parsed.success ? parsed.data.targets : undefined);
}

export function totalsOf(row: TRangeTotalsRow | undefined): TFlowTotals & { batches: number } {
  // The flow counts drops per expectation (droppedBy), not their sum.
  const { dropped: _dropped, ...counted } = perOutcome((outcome) => row?.[outcomeColumn(outcome)] ?? 0);
  return {
    batches: row?.batches ?? 0,
    inputRows: row?.input_rows ?? 0,
    ...counted,
    droppedBy: row?.dropped_by ?? {},
    violations: row?.violations ?? {},
    unbalancedBatches: row?.unbalanced ?? 0,
  };
}

/** null when there is no pipeline of that name. */
export async function getPipelineSignals(
  db: PrismaClient,
  input: TGetPipelineSignalsInput,
  now = new Date(),
): Promise<TPipelineSignals | null> {
  const { pipeline, version, range } = ZGetPipelineSignalsInput.parse(input);
  const ref = await findPipelineVersion(db, pipeline, version);
  if (!ref) return null;
  const targets = targetsOf(ref.version?.spec);
  const ids = ref.version ? [ref.version.id] : [];
  const [totalsRows, recentRows, latest, newest, checkpoint] = await Promise.all([
    queryRangeTotals(db, ids, range.from, range.to),
    queryRangeTotals(db, ids, new Date(now.getTime() - RECENT_RATE_MS), now),
    queryLatestOffsets(db, ids, new Date(now.getTime() - CURRENT_SAMPLE_MS)),
    queryNewestIngest(db, ids),
    ref.version ? findCheckpoint(prismaSqlClient(db), ref.version.id) : undefined,
  ]);
  const totals = totalsOf(totalsRows[0]);
  const samples = latest.map(sampleOf);
  const completeness = completenessOf(
    totals,
    samples,
    (recentRows[0]?.input_rows ?? 0) / (RECENT_RATE_MS / 1000),
  );
  const eventTime = checkpoint?.eventTimeMax.eventTime;
  const flowSpec = ZFlowSpec.safeParse(ref.version?.spec ?? {});
  const range0 = totalsRows[0];
  // A join's own counts over the same batches: what it wrote, dead-lettered and left waiting.
  const join =
    flowSpec.success && flowSpec.data.join && ref.version && range0 && range0.batches > 0
      ? await queryJoinTotals(db, ref.version.id, range0.first_batch_id, range0.last_batch_id)
      : null;
  return {
    pipeline: ref.pipeline,
    version: ref.version?.version ?? null,
    from: range.from,
    to: range.to,
    targets,
    freshness: freshnessOf(
      now,
      eventTime ? new Date(eventTime) : null,
      newest[0]?.ingest_time_max ?? null,
      completeness.backlog,
      targets,
    ),
    completeness,
    correctness: correctnessOf(totals, targets),
    totals,
    flow: pipelineFlow(flowSpec.success ? flowSpec.data : ZFlowSpec.parse({}), totals, {
      joinWaiting: checkpoint?.dimension?.held ?? null,
      join,
    }),
  };
}
