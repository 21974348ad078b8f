// CDC apply-changes: rows are changes to entities (cdc.key), applied in sequenceBy order per key —
// across batches and partitions, because the applied sequences are state (cdc_state) that moves with
// the checkpoint in the batch transaction. An older change never overwrites a newer one: SCD1 counts
// it as stale; SCD2 puts it into history where its sequence belongs (valid_from / valid_to /
// is_current), so shuffled changes end in the same table as changes applied in order.
// With cdc.stateEviction: watermark, points no later change can need leave the state once the late
// horizon passes them (change-points.ts, "State eviction"): a deleted key is forgotten, and a change
// that would have needed it is late, counted and dead-lettered — never applied.
//
// Partition groups (`shared`): a key's changes may arrive on partitions of several groups. A batch
// then only groups its changes by key before the commit; inside it — holding the version's
// checkpoint row, so such commits apply one at a time — it reads the keys' applied points as
// committed and applies its changes to them, so the result is the same in either order.
import type pg from "pg";
import type { TCompiledSpec } from "@sluice/pipeline-spec";
import type { SinkRow } from "../batch/process-batch";
import { lateHorizon } from "../batch/watermark";
import type { OperatorInput, PreparedResult, ResultOperator, StateDelta } from "../operator/result-operator";
import type { SinkTable } from "../store/sink-table";
import {
  deleteResultRows,
  insertResultRows,
  updateResultColumns,
  upsertResultRows,
  type ResultRow,
} from "../store/write-result";
import {
  applyScd1,
  applyScd2,
  orderViolations,
  placePoints,
  type Change,
  type Point,
  type StoredPoint,
  type TimedPoint,
} from "./change-points";
import { evictPoints, loadPoints, writePoints } from "./cdc-store";
import { sequenceType, type SequenceType } from "./sequence";

export class CdcOperator implements ResultOperator {
  readonly kind = "cdc";
  private readonly seq: SequenceType;
  /** The event-time column, when the pipeline has one: points carry their change's event time. */
  private readonly eventColumn: string | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly pipelineVersionId: string,
    private readonly compiled: TCompiledSpec,
    private readonly table: SinkTable,
    private readonly topic: string,
    /** Which output of the pipeline applies the changes ("" for a pipeline with one sink). */
    private readonly output = "",
    /** `shared`: partition groups apply changes side by side; applied in the commit (above). */
    private readonly opts: { shared?: boolean } = {},
  ) {
    const cdc = compiled.spec.cdc!;
    this.seq = sequenceType(compiled.spec.contract.fields[cdc.sequenceBy]!.type);
    this.eventColumn = compiled.spec.eventTime?.column;
  }

  private timed(change: Change<SinkRow>): TimedPoint {
    const time = this.eventColumn ? change.row.values[this.eventColumn] : undefined;
    return {
      sequence: change.sequence,
      deleted: change.deleted,
      eventTime: time instanceof Date ? time.getTime() : null,
    };
  }

  async prepare(input: OperatorInput): Promise<PreparedResult> {
    const { compiled, seq, table } = this;
    const cdc = compiled.spec.cdc!;
    const pv = this.pipelineVersionId;

    // Changes grouped by entity, in arrival order.
    const byKey = new Map<string, Change<SinkRow>[]>();
    for (const row of input.rows) {
      const key = entityKey(cdc.key.map((k) => row.values[k]));
      const deleted = compiled.deleteWhen ? compiled.deleteWhen.test(compiled.toCelRow(row.values)) : false;
      const change = { sequence: seq.canonical(row.values[cdc.sequenceBy]), deleted, row };
      const list = byKey.get(key);
      if (list) list.push(change);
      else byKey.set(key, [change]);
    }
    const meta = (row: SinkRow): ResultRow => ({
      _rescued: row.rescued,
      _topic: this.topic,
      _partition: row.partition,
      _offset: row.offset,
      _ingest_time: row.ingestTimeMs,
      _batch_id: input.batchId,
      _pipeline_version: pv,
    });

    const output = this.output;
    const shared = this.opts.shared === true;
    const horizonBy = (watermark: Date | null) =>
      cdc.stateEviction === "watermark" && this.eventColumn
        ? lateHorizon(watermark, compiled.timing.allowedLatenessMs)
        : null;
    let applied = shared
      ? undefined
      : this.applyChanges(
          byKey,
          input.rows.length,
          meta,
          await loadPoints(this.pool, pv, output, [...byKey.keys()]),
        );
    let evicted = 0;
    return {
      // Partition groups: known only in the commit, which counts them there.
      stale: applied?.stale ?? 0,
      failed: [],
      // A getter: `evicted` is known once write() has run, inside the transaction.
      get report() {
        return { kind: "cdc" as const, ...(applied?.counts ?? { keys: byKey.size }), evicted };
      },
      write: async (client, committed): Promise<StateDelta & { stale?: number }> => {
        if (shared)
          applied = this.applyChanges(
            byKey,
            input.rows.length,
            meta,
            await loadPoints(client, pv, output, [...byKey.keys()]),
          );
        const { upserts, deletes, inserts, closes, added, replaced } = applied!;
        if (cdc.scdType === 1) {
          await deleteResultRows(client, table, deletes);
          await upsertResultRows(client, table, upserts);
        } else {
          await updateResultColumns(client, table, closes, ["valid_to", "is_current"]);
          await insertResultRows(client, table, inserts);
        }
        const delta = await writePoints(client, pv, output, added, replaced);
        const stale = shared ? { stale: applied!.stale } : {};
        const horizon = horizonBy(shared ? (committed?.watermark ?? null) : input.watermark);
        if (!horizon) return { ...delta, ...stale };
        const gone = await evictPoints(client, pv, output, horizon);
        evicted = gone.rows;
        return { rows: delta.rows - gone.rows, bytes: delta.bytes - gone.bytes, ...stale };
      },
    };
  }

  /** The batch's changes applied to the keys' points as stored: what to write, and the counts. */
  private applyChanges(
    byKey: Map<string, Change<SinkRow>[]>,
    rows: number,
    meta: (row: SinkRow) => ResultRow,
    stored: Map<string, StoredPoint[]>,
  ) {
    const { seq } = this;
    const cdc = this.compiled.spec.cdc!;
    let stale = 0;
    let violations = 0;
    const added: { entityKey: string; point: StoredPoint }[] = [];
    const replaced: { entityKey: string; point: Point }[] = [];
    const upserts: ResultRow[] = [];
    const deletes: ResultRow[] = [];
    const inserts: ResultRow[] = [];
    const closes: ResultRow[] = [];
    for (const [key, changes] of byKey) {
      const points = stored.get(key) ?? [];
      if (this.eventColumn)
        violations += orderViolations(
          points,
          changes.map((c) => this.timed(c)),
          seq,
        );
      if (cdc.scdType === 1) {
        const previous = points[0];
        const out = applyScd1(previous, changes, seq);
        stale += out.stale;
        if (!out.winner) continue;
        const { row, deleted } = out.winner;
        // One point per key: the winner replaces the previous one.
        for (const point of placePoints([], [this.timed(out.winner)], seq).insert)
          added.push({ entityKey: key, point });
        if (previous) replaced.push({ entityKey: key, point: previous });
        if (deleted) deletes.push(Object.fromEntries(cdc.key.map((k) => [k, row.values[k]])));
        else upserts.push({ ...row.values, ...meta(row) });
      } else {
        const out = applyScd2(points, changes, seq);
        stale += out.stale;
        const placed = placePoints(
          points,
          out.added.map((c) => this.timed(c)),
          seq,
        );
        for (const point of placed.insert) added.push({ entityKey: key, point });
        for (const point of placed.rewrite) {
          replaced.push({ entityKey: key, point });
          added.push({ entityKey: key, point });
        }
        for (const v of out.inserts)
          inserts.push({
            ...v.row.values,
            valid_from: v.sequence,
            valid_to: v.validTo,
            is_current: v.validTo === null,
            ...meta(v.row),
          });
        const keyValues = parseEntityKey(key);
        for (const v of out.updates)
          closes.push({
            ...Object.fromEntries(cdc.key.map((k, i) => [k, keyValues[i]])),
            valid_from: v.sequence,
            valid_to: v.validTo,
            is_current: v.validTo === null,
          });
      }
    }

    const counts = {
      keys: byKey.size,
      applied: rows - stale,
      stale,
      upserted: upserts.length + inserts.length,
      deleted: deletes.length,
      historyUpdated: closes.length,
      orderViolations: violations,
    };
    return { stale, counts, added, replaced, upserts, deletes, inserts, closes };
  }
}

/** One text per entity: the key values as a JSON array (dates as ISO text). */
function entityKey(values: unknown[]): string {
  return JSON.stringify(values.map((v) => (v instanceof Date ? v.toISOString() : v)));
}

function parseEntityKey(key: string): unknown[] {
  return JSON.parse(key) as unknown[];
}
