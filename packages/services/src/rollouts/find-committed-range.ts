// The range both sides have committed, from their checkpoints (read in the reconciliation's snapshot,
// so the tables and the checkpoints agree): for windows the event time up to which both sides'
// windows are final (watermark − allowedLateness, the lower of the two, on the common grain); for rows
// the offsets both have read, per partition; for running aggregates the offsets, which must be equal.
import { loadCheckpoint, type Checkpoint } from "@sluice/engine";
import { formatDuration } from "@sluice/pipeline-spec";
import type pg from "pg";
import type { TComparisonPlan } from "./plan-comparison";
import type { TReconcileInput, TReconcileRange } from "./reconciliation-report";

type TPlan = Extract<TComparisonPlan, { comparable: true }>;

export type TCommittedRange =
  | { committed: true; range: TReconcileRange; to: Record<string, number>; from: Record<string, number> }
  | { committed: false; range: TReconcileRange | null; reason: string };

export async function findCommittedRange(
  db: pg.PoolClient,
  plan: TPlan,
  input: Pick<TReconcileInput, "blue" | "green" | "from">,
): Promise<TCommittedRange> {
  // One connection (the snapshot's): one query at a time.
  const blue = await loadCheckpoint(db, input.blue.pipelineVersionId);
  const green = await loadCheckpoint(db, input.green.pipelineVersionId);
  const offsets = commonOffsets(blue, green, input.from?.offsets ?? {});
  if (plan.basis === "event_time") {
    const final = (c: Checkpoint, output: string | undefined, latenessMs: number) => {
      const watermark = output ? c.outputs[output]?.watermark : c.watermark;
      return watermark ? new Date(new Date(watermark).getTime() - latenessMs) : null;
    };
    const blueFinal = final(blue, input.blue.output, plan.latenessMs.blue);
    const greenFinal = final(green, input.green.output, plan.latenessMs.green);
    const grain = plan.grainMs ?? 0;
    const floor = (t: number) => (grain > 0 ? Math.floor(t / grain) * grain : t);
    const ceil = (t: number) => (grain > 0 ? Math.ceil(t / grain) * grain : t);
    const upTo =
      blueFinal && greenFinal ? new Date(floor(Math.min(blueFinal.getTime(), greenFinal.getTime()))) : null;
    const fromTime = input.from?.eventTime ? new Date(ceil(input.from.eventTime.getTime())) : null;
    const range: TReconcileRange = {
      basis: "event_time",
      from: fromTime?.toISOString() ?? null,
      to: upTo?.toISOString() ?? null,
      grain:
        plan.grainMs === null ? "the windows themselves (identical sliding windows)" : formatDuration(grain),
      blueFinalUpTo: blueFinal?.toISOString() ?? null,
      greenFinalUpTo: greenFinal?.toISOString() ?? null,
    };
    if (!upTo)
      return {
        committed: false,
        range,
        reason: `${!blueFinal ? "blue" : "green"} has no watermark yet: no window of it is final`,
      };
    return { committed: true, range, ...offsets };
  }
  const range: TReconcileRange = {
    basis: plan.basis,
    topic: input.blue.spec.source.kafka.topic,
    partitions: Object.keys(offsets.to)
      .map(Number)
      .sort((a, b) => a - b)
      .map((partition) => ({
        partition,
        from: offsets.from[String(partition)] ?? 0,
        to: offsets.to[String(partition)]!,
      })),
  };
  if (range.partitions.length === 0)
    return { committed: false, range, reason: "the two sides have not both read any partition yet" };
  if (plan.basis === "same_offsets") {
    const differ = Object.keys({ ...blue.endOffsets, ...green.endOffsets }).filter(
      (p) => blue.endOffsets[p] !== green.endOffsets[p],
    );
    if (differ.length > 0)
      return {
        committed: false,
        range,
        reason: `running totals are compared only when both sides have read the same offsets: ${differ
          .map(
            (p) =>
              `partition ${p}: blue at ${blue.endOffsets[p] ?? "nothing"}, green at ${green.endOffsets[p] ?? "nothing"}`,
          )
          .join("; ")} — compare again once green has caught up and no input arrives, or with both paused`,
      };
  }
  return { committed: true, range, ...offsets };
}

/** Per partition both sides have read: the lower end offset, and where the comparison starts. */
function commonOffsets(blue: Checkpoint, green: Checkpoint, from: Record<string, number>) {
  const to: Record<string, number> = {};
  for (const [p, end] of Object.entries(blue.endOffsets)) {
    const other = green.endOffsets[p];
    if (other !== undefined) to[p] = Math.min(end, other);
  }
  const start = Object.fromEntries(Object.keys(to).map((p) => [p, Math.min(from[p] ?? 0, to[p]!)]));
  return { to, from: start };
}
