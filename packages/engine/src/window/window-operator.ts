// Event-time aggregation (product.md semantics 4): rows are folded into the windows that contain their
// event time, per group; window state lives in Postgres and changes in the batch's transaction. A
// window is final once the watermark passes its end plus allowedLateness — then it is written
// (append), or its last upsert stands (update), and its state is evicted, so state stays bounded.
// Without a window the result is a keyed running aggregate (update or complete), bounded by its keys.
//
// Partition groups (`shared`): several groups' batches update the same windows (a group-by key that
// is not the Kafka key). A batch then only folds its rows into per-window deltas before the commit;
// inside it — holding the version's checkpoint row, so such commits run one at a time — it reads the
// touched windows as committed, merges its deltas into them, and finalizes by the watermark the commit
// stores (this batch's time applied onto the other groups'). A batch whose rows another group's commit
// made late meanwhile never gets here: the commit runs it again first (commit-batch.ts). A window
// this batch's own advance makes final is merged, then finalized, as with one runner.
import type pg from "pg";
import type { TCompiledSpec } from "@sluice/pipeline-spec";
import { dedupKey } from "../batch/dedup";
import { InvariantError } from "../errors";
import type { OperatorInput, PreparedResult, ResultOperator, StateDelta } from "../operator/result-operator";
import type { SinkTable } from "../store/sink-table";
import { insertResultRows, replaceResultRows, upsertResultRows, type ResultRow } from "../store/write-result";
import { measureSet, type MeasureSet } from "./accumulators";
import { windowsContaining } from "./window-assign";
import {
  evictWindows,
  loadWindows,
  takeFinalWindows,
  loadWindowsEndingBy,
  upsertWindows,
  windowBytes,
  windowId,
  type StoredWindow,
  type WindowRow,
} from "./window-store";

/** Where final or changed windows go: a Postgres table (in the transaction) or a webhook (before it). */
export type WindowOutput =
  | { kind: "table"; table: SinkTable }
  | { kind: "webhook"; deliver(rows: ResultRow[], input: OperatorInput): Promise<Record<string, number>> };

/** Up to this many windows, the committed state is also kept in memory (read from Postgres once). */
const MAX_CACHED_WINDOWS = 100_000;

export class WindowOperator implements ResultOperator {
  readonly kind = "window";
  private readonly measures: MeasureSet;
  /**
   * The committed window state after `batchId`, when it fits in memory. Valid only for the next
   * batch of this runner: a failed commit leaves it untouched, and a batch after anyone else's
   * commit (a different batch id) reads Postgres again.
   */
  private cache: { batchId: number; windows: Map<string, StoredWindow> } | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly pipelineVersionId: string,
    private readonly compiled: TCompiledSpec,
    private readonly output: WindowOutput,
    /** Which output of the pipeline the windows belong to ("" for a pipeline with one sink). */
    private readonly outputName = "",
    /** `shared`: partition groups update these windows side by side; merged in the commit (above). */
    private readonly opts: { shared?: boolean } = {},
  ) {
    this.measures = measureSet(compiled.measures, compiled.spec.contract);
  }

  async prepare(input: OperatorInput): Promise<PreparedResult> {
    const { pool, pipelineVersionId: pv, compiled, measures } = this;
    const aggregate = compiled.spec.aggregate!;
    const mode = aggregate.outputMode;
    const { windowSizeMs: size, windowSlideMs: slide, allowedLatenessMs } = compiled.timing;
    const eventColumn = compiled.spec.eventTime?.column;
    const started = performance.now();

    // 1. Fold this batch's rows into per-window deltas.
    const touched = new Map<string, WindowRow>();
    const groups = new Map<string, unknown[]>();
    const fold = (
      groupKey: string,
      groupValues: unknown[],
      start: number,
      end: number,
      values: Record<string, unknown>,
      cel: ReturnType<TCompiledSpec["toCelRow"]> | undefined,
    ) => {
      const id = `${start}\u0000${groupKey}`;
      let w = touched.get(id);
      if (!w)
        touched.set(
          id,
          (w = {
            groupKey,
            groupValues,
            windowStart: new Date(start),
            windowEnd: new Date(end),
            accumulators: measures.empty(),
          }),
        );
      measures.add(w.accumulators, values, cel);
    };
    for (const row of input.rows) {
      const values = row.values;
      const cel = measures.hasConditions ? compiled.toCelRow(values) : undefined;
      const groupKey = dedupKey(values, aggregate.groupBy);
      let groupValues = groups.get(groupKey);
      if (!groupValues)
        groups.set(groupKey, (groupValues = aggregate.groupBy.map((c) => jsonValue(values[c]))));
      if (size === undefined) {
        // Keyed running aggregates (no window) keep one state row per group, under window start 0.
        fold(groupKey, groupValues, 0, 0, values, cel);
        continue;
      }
      const t = (values[eventColumn!] as Date).getTime();
      if (slide === size) {
        const start = Math.floor(t / size) * size;
        fold(groupKey, groupValues, start, start + size, values, cel);
      } else
        for (const b of windowsContaining(t, size, slide!))
          fold(groupKey, groupValues, b.start, b.end, values, cel);
    }
    const foldMs = Math.round(performance.now() - started);
    if (this.opts.shared) return this.mergedInCommit(input, touched, foldMs);

    // 2. Merge with the committed state of the same windows.
    const state = await this.committedState(input.batchId);
    const stored = state
      ? new Map([...touched.keys()].flatMap((id) => (state.has(id) ? [[id, state.get(id)!] as const] : [])))
      : await loadWindows(pool, pv, this.outputName, [...touched.values()]);
    const merged = this.mergeDeltas([...touched.values()], stored);

    // 3. Which windows are final now: end + allowedLateness ≤ the watermark this batch commits.
    const finalBy =
      size !== undefined && input.watermark ? new Date(input.watermark.getTime() - allowedLatenessMs) : null;
    const isFinal = (w: WindowRow) => finalBy !== null && w.windowEnd <= finalBy;
    const open = merged.filter((w) => !isFinal(w));

    // 4. The result rows this batch writes, by output mode.
    let resultWindows: WindowRow[];
    if (mode === "update") resultWindows = merged;
    else {
      const all =
        mode === "append"
          ? finalBy
            ? await this.storedEndingBy(state, finalBy)
            : []
          : await this.storedEndingBy(state, null);
      const byId = new Map(all.map((w) => [windowId(w.groupKey, w.windowStart), w as WindowRow]));
      for (const w of mode === "append" ? merged.filter(isFinal) : merged)
        byId.set(windowId(w.groupKey, w.windowStart), w);
      resultWindows = [...byId.values()];
    }
    const meta = { _batch_id: input.batchId, _pipeline_version: pv };
    const resultRows = resultWindows.map((w) => ({ ...this.resultRow(w), ...meta }));
    const delivered = this.output.kind === "webhook" ? await this.output.deliver(resultRows, input) : {};

    const output = this.output;
    const outputName = this.outputName;
    const growth = stateGrowth(open, stored);
    let evicted: StateDelta = { rows: 0, bytes: 0 };
    const prepareMs = Math.round(performance.now() - started);
    let writeMs = 0;
    return {
      stale: 0,
      failed: [],
      async write(client) {
        const writeStarted = performance.now();
        await upsertWindows(client, pv, outputName, input.batchId, open);
        if (finalBy) evicted = await evictWindows(client, pv, outputName, finalBy);
        if (output.kind === "table") {
          if (mode === "update") await upsertResultRows(client, output.table, resultRows);
          else if (mode === "append") await insertResultRows(client, output.table, resultRows);
          else await replaceResultRows(client, output.table, resultRows);
        }
        writeMs = Math.round(performance.now() - writeStarted);
        return { rows: growth.rows - evicted.rows, bytes: growth.bytes - evicted.bytes };
      },
      get report() {
        return {
          kind: "window" as const,
          windowsUpdated: merged.length,
          resultRows: resultRows.length,
          windowsEvicted: evicted.rows,
          foldMs,
          prepareMs,
          writeMs,
          ...delivered,
        };
      },
      onCommitted: () => {
        if (!state) return;
        for (const w of open) state.set(windowId(w.groupKey, w.windowStart), w);
        if (finalBy) for (const [id, w] of state) if (w.windowEnd <= finalBy) state.delete(id);
        this.cache =
          state.size <= MAX_CACHED_WINDOWS ? { batchId: input.batchId, windows: state } : undefined;
      },
    };
  }

  /**
   * Partition groups: the batch's deltas, merged in the commit with the windows as committed then, by
   * the watermark the commit stores (the commit holds the version's row: one such merge at a time).
   */
  private mergedInCommit(
    input: OperatorInput,
    touched: Map<string, WindowRow>,
    foldMs: number,
  ): PreparedResult {
    const { pipelineVersionId: pv, outputName, output } = this;
    const mode = this.compiled.spec.aggregate!.outputMode;
    const { windowSizeMs: size, allowedLatenessMs } = this.compiled.timing;
    if (output.kind !== "table" || mode === "complete")
      throw new InvariantError(
        `windows in partition groups write a table in update or append mode, not ${mode}`,
      );
    const deltas = [...touched.values()];
    const meta = { _batch_id: input.batchId, _pipeline_version: pv };
    const report = { windowsUpdated: deltas.length, resultRows: 0, windowsEvicted: 0, writeMs: 0 };
    return {
      stale: 0,
      failed: [],
      write: async (client, committed) => {
        if (!committed)
          throw new InvariantError(`batch ${input.batchId}: shared windows need the committed watermark`);
        const started = performance.now();
        const finalBy =
          size !== undefined && committed.watermark
            ? new Date(committed.watermark.getTime() - allowedLatenessMs)
            : null;
        const stored = await loadWindows(client, pv, outputName, deltas);
        const merged = this.mergeDeltas(deltas, stored);
        await upsertWindows(client, pv, outputName, input.batchId, merged);
        const growth = stateGrowth(merged, stored);
        // Update mode writes every window it changed; append mode each window the moment it is final.
        let evicted: StateDelta = { rows: 0, bytes: 0 };
        let result: WindowRow[] = merged;
        if (mode === "append") {
          const final = finalBy ? await takeFinalWindows(client, pv, outputName, finalBy) : [];
          evicted = { rows: final.length, bytes: final.reduce((b, w) => b + w.bytes, 0) };
          result = final;
          await insertResultRows(
            client,
            output.table,
            final.map((w) => ({ ...this.resultRow(w), ...meta })),
          );
        } else {
          if (finalBy) evicted = await evictWindows(client, pv, outputName, finalBy);
          await upsertResultRows(
            client,
            output.table,
            merged.map((w) => ({ ...this.resultRow(w), ...meta })),
          );
        }
        Object.assign(report, {
          resultRows: result.length,
          windowsEvicted: evicted.rows,
          writeMs: Math.round(performance.now() - started),
        });
        return { rows: growth.rows - evicted.rows, bytes: growth.bytes - evicted.bytes };
      },
      get report() {
        return { kind: "window" as const, foldMs, prepareMs: foldMs, ...report };
      },
    };
  }

  /** Each window's delta merged into its committed state (or into an empty one for a new window). */
  private mergeDeltas(deltas: WindowRow[], stored: Map<string, StoredWindow>): StoredWindow[] {
    const { measures } = this;
    return deltas.map((w) => {
      const before = stored.get(windowId(w.groupKey, w.windowStart));
      const next = {
        ...w,
        accumulators: measures.merge(before ? before.accumulators : measures.empty(), w.accumulators),
      };
      return { ...next, bytes: windowBytes(next) };
    });
  }

  /** The committed state (all windows) when it is cached or small enough to cache; else undefined. */
  private async committedState(batchId: number): Promise<Map<string, StoredWindow> | undefined> {
    if (this.cache?.batchId === batchId - 1) return this.cache.windows;
    this.cache = undefined;
    const count = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM window_state WHERE pipeline_version_id = $1 AND output = $2`,
      [this.pipelineVersionId, this.outputName],
    );
    if (count.rows[0]!.n > MAX_CACHED_WINDOWS) return undefined;
    const all = await loadWindowsEndingBy(this.pool, this.pipelineVersionId, this.outputName, null);
    return new Map(all.map((w) => [windowId(w.groupKey, w.windowStart), w]));
  }

  private async storedEndingBy(
    state: Map<string, StoredWindow> | undefined,
    before: Date | null,
  ): Promise<StoredWindow[]> {
    if (!state) return loadWindowsEndingBy(this.pool, this.pipelineVersionId, this.outputName, before);
    return [...state.values()].filter((w) => before === null || w.windowEnd <= before);
  }

  private resultRow(w: WindowRow): ResultRow {
    const aggregate = this.compiled.spec.aggregate!;
    const row: ResultRow = Object.fromEntries(aggregate.groupBy.map((c, i) => [c, w.groupValues[i]]));
    if (aggregate.window) Object.assign(row, { window_start: w.windowStart, window_end: w.windowEnd });
    return { ...row, ...this.measures.results(w.accumulators) };
  }
}

/** How much state the windows written add over what was stored for them. */
function stateGrowth(written: StoredWindow[], stored: Map<string, StoredWindow>): StateDelta {
  return written.reduce(
    (d, w) => {
      const before = stored.get(windowId(w.groupKey, w.windowStart));
      return { rows: d.rows + (before ? 0 : 1), bytes: d.bytes + w.bytes - (before?.bytes ?? 0) };
    },
    { rows: 0, bytes: 0 } as StateDelta,
  );
}

// Group values are stored as JSON: dates as ISO text (Postgres casts them back on write).
const jsonValue = (v: unknown) => (v instanceof Date ? v.toISOString() : (v ?? null));
