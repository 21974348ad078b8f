// Event-time aggregation (product.md semantics 4): rows are folded into the windows that contain their
// event time, per group; window state lives in Postgres and changes in the batch's transaction. A
// window is final once the watermark passes its end plus allowedLateness — then it is written
// (append), or its last upsert stands (update), and its state is evicted, so state stays bounded.
// Without a window the result is a keyed running aggregate (update or complete), bounded by its keys.
import type pg from "pg";
import type { TCompiledSpec } from "@sluice/spec";
import { dedupKey } from "../batch/dedup";
import type { OperatorInput, PreparedResult, ResultOperator, StateDelta } from "../operator/result-operator";
import type { SinkTable } from "../store/sink-table";
import { insertResultRows, replaceResultRows, upsertResultRows, type ResultRow } from "../store/write-result";
import { measureSet, type MeasureSet } from "./accumulators";
import { windowsContaining } from "./window-assign";
import { evictWindows, loadWindows, loadWindowsEndingBy, upsertWindows, windowBytes, windowId, type StoredWindow, type WindowRow } from "./window-store";

/** Where final or changed windows go: a Postgres table (in the transaction) or a webhook (before it). */
export type WindowOutput =
  | { kind: "table"; table: SinkTable }
  | { kind: "webhook"; deliver(rows: ResultRow[], input: OperatorInput): Promise<Record<string, number>> };

export class WindowOperator implements ResultOperator {
  readonly kind = "window";
  private readonly measures: MeasureSet;

  constructor(
    private readonly pool: pg.Pool,
    private readonly pipelineVersionId: string,
    private readonly compiled: TCompiledSpec,
    private readonly output: WindowOutput,
  ) {
    this.measures = measureSet(compiled.measures, compiled.spec.contract);
  }

  async prepare(input: OperatorInput): Promise<PreparedResult> {
    const { pool, pipelineVersionId: pv, compiled, measures } = this;
    const aggregate = compiled.spec.aggregate!;
    const mode = aggregate.outputMode;
    const { windowSizeMs, windowSlideMs, allowedLatenessMs } = compiled.timing;
    const eventColumn = compiled.spec.eventTime?.column;

    // 1. Fold this batch's rows into per-window deltas.
    const touched = new Map<string, WindowRow>();
    for (const row of input.rows) {
      const values = row.values;
      const cel = measures.hasConditions ? compiled.toCelRow(values) : undefined;
      const groupValues = aggregate.groupBy.map((c) => jsonValue(values[c]));
      const groupKey = dedupKey(values, aggregate.groupBy);
      // Keyed running aggregates (no window) keep one state row per group, under window start 0.
      const bounds = windowSizeMs === undefined ? [{ start: 0, end: 0 }] : windowsContaining((values[eventColumn!] as Date).getTime(), windowSizeMs, windowSlideMs!);
      for (const b of bounds) {
        const windowStart = new Date(b.start);
        const id = windowId(groupKey, windowStart);
        let w = touched.get(id);
        if (!w) touched.set(id, (w = { groupKey, groupValues, windowStart, windowEnd: new Date(b.end), accumulators: measures.empty() }));
        measures.add(w.accumulators, values, cel);
      }
    }

    // 2. Merge with the stored state of the same windows.
    const stored = await loadWindows(pool, pv, [...touched.values()]);
    const merged: StoredWindow[] = [...touched.entries()].map(([id, w]) => {
      const before = stored.get(id);
      const accumulators = before ? measures.merge(before.accumulators, w.accumulators) : measures.merge(measures.empty(), w.accumulators);
      const next = { ...w, accumulators };
      return { ...next, bytes: windowBytes(next) };
    });

    // 3. Which windows are final now: end + allowedLateness ≤ the watermark this batch commits.
    const finalBy = windowSizeMs !== undefined && input.watermark ? new Date(input.watermark.getTime() - allowedLatenessMs) : null;
    const isFinal = (w: WindowRow) => finalBy !== null && w.windowEnd <= finalBy;
    const open = merged.filter((w) => !isFinal(w));

    // 4. The result rows this batch writes, by output mode.
    let resultWindows: WindowRow[];
    if (mode === "update") resultWindows = merged;
    else if (mode === "append") {
      const finals = new Map(merged.filter(isFinal).map((w) => [windowId(w.groupKey, w.windowStart), w as WindowRow]));
      if (finalBy) for (const w of await loadWindowsEndingBy(pool, pv, finalBy)) if (!finals.has(windowId(w.groupKey, w.windowStart))) finals.set(windowId(w.groupKey, w.windowStart), w);
      resultWindows = [...finals.values()];
    } else {
      const all = new Map((await loadWindowsEndingBy(pool, pv, null)).map((w) => [windowId(w.groupKey, w.windowStart), w as WindowRow]));
      for (const w of merged) all.set(windowId(w.groupKey, w.windowStart), w);
      resultWindows = [...all.values()];
    }
    const meta = { _batch_id: input.batchId, _pipeline_version: pv };
    const resultRows = resultWindows.map((w) => ({ ...this.resultRow(w), ...meta }));
    const delivered = this.output.kind === "webhook" ? await this.output.deliver(resultRows, input) : {};

    const output = this.output;
    const growth = open.reduce((d, w) => {
      const before = stored.get(windowId(w.groupKey, w.windowStart));
      return { rows: d.rows + (before ? 0 : 1), bytes: d.bytes + w.bytes - (before?.bytes ?? 0) };
    }, { rows: 0, bytes: 0 } as StateDelta);
    let evicted: StateDelta = { rows: 0, bytes: 0 };
    return {
      stale: 0,
      failed: [],
      async write(client) {
        await upsertWindows(client, pv, input.batchId, open);
        if (finalBy) evicted = await evictWindows(client, pv, finalBy);
        if (output.kind === "table") {
          if (mode === "update") await upsertResultRows(client, output.table, resultRows);
          else if (mode === "append") await insertResultRows(client, output.table, resultRows);
          else await replaceResultRows(client, output.table, resultRows);
        }
        return { rows: growth.rows - evicted.rows, bytes: growth.bytes - evicted.bytes };
      },
      get report() {
        return { kind: "window" as const, windowsUpdated: merged.length, resultRows: resultRows.length, windowsEvicted: evicted.rows, ...delivered };
      },
    };
  }

  private resultRow(w: WindowRow): ResultRow {
    const aggregate = this.compiled.spec.aggregate!;
    const row: ResultRow = Object.fromEntries(aggregate.groupBy.map((c, i) => [c, w.groupValues[i]]));
    if (aggregate.window) Object.assign(row, { window_start: w.windowStart, window_end: w.windowEnd });
    return { ...row, ...this.measures.results(w.accumulators) };
  }
}

// Group values are stored as JSON: dates as ISO text (Postgres casts them back on write).
const jsonValue = (v: unknown) => (v instanceof Date ? v.toISOString() : v ?? null);
