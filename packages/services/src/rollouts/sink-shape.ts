// What one side's sink table holds, read from its spec: windows (and how big), a running aggregate,
// or rows keyed by the sink key (ledgers, CDC) — the facts plan-comparison.ts lines two sides up by.
import {
  outputColumns,
  outputViews,
  parseDuration,
  type TColumn,
  type TMeasure,
  type TPipelineSpec,
} from "@sluice/pipeline-spec";

/** Sluice's own columns in a sink table: where a row came from and which batch wrote it. Never compared. */
export const SOURCE_POSITION = ["_topic", "_partition", "_offset"] as const;

export type TSinkShape =
  | {
      kind: "windows";
      topic: string;
      groupBy: string[];
      /** Tumbling: slide = size. */
      window: { sizeMs: number; slideMs: number };
      latenessMs: number;
      measures: Record<string, TMeasure>;
      columns: TColumn[];
    }
  | {
      /** An aggregate without a window: one running result per group, rewritten as input arrives. */
      kind: "running";
      topic: string;
      groupBy: string[];
      measures: Record<string, TMeasure>;
      columns: TColumn[];
    }
  | {
      /** A ledger (append or upsert) or a CDC table: rows that carry their source position. */
      kind: "rows";
      topic: string;
      /** The table's key; the source position for a keyless append ledger. */
      key: string[];
      /** Rows are rewritten in place (upsert, CDC): a row's position is its latest write's. */
      rewritten: boolean;
      columns: TColumn[];
      /** Columns the engine rewrites when a later change arrives (SCD2's valid_to, is_current). */
      volatile: string[];
    }
  | { kind: "webhook"; topic: string };

/** The shape of one output of a spec ("" or absent: the spec's only sink). Throws for an unknown output. */
export function sinkShape(spec: TPipelineSpec, output = ""): TSinkShape {
  const view = outputViews(spec).find((v) => v.name === output);
  if (!view) {
    const names = outputViews(spec).map((v) => (v.name === "" ? '"" (the only sink)' : v.name));
    throw new Error(`the spec has no output ${JSON.stringify(output)}: it has ${names.join(", ")}`);
  }
  const s = view.spec;
  const topic = s.source.kafka.topic;
  if (!s.sink.postgres) return { kind: "webhook", topic };
  const columns = outputColumns(s);
  if (s.aggregate) {
    const { window, groupBy, measures, allowedLateness } = s.aggregate;
    if (!window)
      return { kind: "running", topic, groupBy, measures: measures as Record<string, TMeasure>, columns };
    const sizeMs = parseDuration(window.tumbling ?? window.sliding.size);
    const slideMs = window.sliding ? parseDuration(window.sliding.slide) : sizeMs;
    return {
      kind: "windows",
      topic,
      groupBy,
      window: { sizeMs, slideMs },
      latenessMs: parseDuration(allowedLateness),
      measures: measures as Record<string, TMeasure>,
      columns,
    };
  }
  const pg = s.sink.postgres;
  return {
    kind: "rows",
    topic,
    key: pg.key ?? [...SOURCE_POSITION],
    rewritten: pg.mode === "upsert" || s.cdc !== undefined,
    columns,
    volatile: s.cdc?.scdType === 2 ? ["valid_to", "is_current"] : [],
  };
}
