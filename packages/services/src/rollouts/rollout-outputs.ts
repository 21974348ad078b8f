// Which results of a rollout's two versions are reconciled: each output both specs write to Postgres,
// by output name ("" for a spec's only sink), each side on its own physical table (sink_tables, in
// the sinks schema). An output only one side has, or a webhook (no table to read back), has nothing
// to compare: it is listed as skipped with why, and the promotion rule does not wait for it.
import { servingName, SINK_SCHEMA, type SinkTableMap } from "@sluice/engine";
import { outputViews, type TPipelineSpec } from "@sluice/pipeline-spec";
import type { TReconcileSide } from "./reconciliation-report";

export interface TVersionSide {
  pipelineVersionId: string;
  spec: TPipelineSpec;
  /** pipeline_versions.sink_tables: serving name → physical table. */
  sinkTables: SinkTableMap;
}

export interface TOutputPair {
  /** "" for a spec's only sink. */
  output: string;
  blue: TReconcileSide;
  green: TReconcileSide;
}

export interface TSkippedOutput {
  output: string;
  reason: string;
}

export function rolloutOutputs(
  blue: TVersionSide,
  green: TVersionSide,
): { pairs: TOutputPair[]; skipped: TSkippedOutput[] } {
  const tables = (v: TVersionSide) =>
    new Map(outputViews(v.spec).map((o) => [o.name, o.spec.sink.postgres?.table ?? null] as const));
  const b = tables(blue);
  const g = tables(green);
  const pairs: TOutputPair[] = [];
  const skipped: TSkippedOutput[] = [];
  const label = (o: string) => (o === "" ? "the sink" : `output ${o}`);
  for (const output of [...new Set([...b.keys(), ...g.keys()])].sort()) {
    if (!b.has(output) || !g.has(output)) {
      skipped.push({
        output,
        reason: `${label(output)} is only in ${b.has(output) ? "blue" : "green"}'s spec: nothing to compare it with`,
      });
      continue;
    }
    const [bt, gt] = [b.get(output), g.get(output)];
    if (!bt || !gt) {
      skipped.push({
        output,
        reason: `${label(output)} is a webhook in ${!bt ? "blue" : "green"}: what it sent is not stored in a table to compare`,
      });
      continue;
    }
    const [bp, gp] = [blue.sinkTables[servingName(bt)], green.sinkTables[servingName(gt)]];
    if (!bp || !gp) {
      skipped.push({
        output,
        reason: `${!bp ? "blue" : "green"} has no physical table for ${servingName(!bp ? bt : gt)} (pipeline_versions.sink_tables): register the version again`,
      });
      continue;
    }
    const side = (v: TVersionSide, name: string): TReconcileSide => ({
      pipelineVersionId: v.pipelineVersionId,
      spec: v.spec,
      table: { schema: SINK_SCHEMA, name },
      ...(output === "" ? {} : { output }),
    });
    pairs.push({ output, blue: side(blue, bp), green: side(green, gp) });
  }
  return { pairs, skipped };
}
