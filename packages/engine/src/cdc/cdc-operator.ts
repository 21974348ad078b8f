// CDC apply-changes: rows are changes to entities (cdc.key), applied in sequenceBy order per key —
// across batches and partitions, because the applied sequences are state (cdc_state) that moves with
// the checkpoint in the batch transaction. An older change never overwrites a newer one: SCD1 counts
// it as stale; SCD2 puts it into history where its sequence belongs (valid_from / valid_to /
// is_current), so shuffled changes end in the same table as changes applied in order.
import type pg from "pg";
import type { TCompiledSpec } from "@sluice/spec";
import type { SinkRow } from "../batch/process-batch";
import type { OperatorInput, PreparedResult, ResultOperator, StateDelta } from "../operator/result-operator";
import type { SinkTable } from "../store/sink-table";
import { deleteResultRows, insertResultRows, updateResultColumns, upsertResultRows, type ResultRow } from "../store/write-result";
import { applyScd1, applyScd2, type Change, type Point } from "./change-points";
import { loadPoints, writePoints } from "./cdc-store";
import { sequenceType, type SequenceType } from "./sequence";

export class CdcOperator implements ResultOperator {
  readonly kind = "cdc";
  private readonly seq: SequenceType;

  constructor(
    private readonly pool: pg.Pool,
    private readonly pipelineVersionId: string,
    private readonly compiled: TCompiledSpec,
    private readonly table: SinkTable,
    private readonly topic: string,
  ) {
    const cdc = compiled.spec.cdc!;
    this.seq = sequenceType(compiled.spec.contract.fields[cdc.sequenceBy]!.type);
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
    const stored = await loadPoints(this.pool, pv, [...byKey.keys()]);
    const meta = (row: SinkRow): ResultRow => ({
      _rescued: row.rescued,
      _topic: this.topic,
      _partition: row.partition,
      _offset: row.offset,
      _ingest_time: row.ingestTimeMs,
      _batch_id: input.batchId,
      _pipeline_version: pv,
    });

    let stale = 0;
    const added: { entityKey: string; point: Point }[] = [];
    const replaced: { entityKey: string; point: Point }[] = [];
    const upserts: ResultRow[] = [];
    const deletes: ResultRow[] = [];
    const inserts: ResultRow[] = [];
    const closes: ResultRow[] = [];
    for (const [key, changes] of byKey) {
      const points = stored.get(key) ?? [];
      if (cdc.scdType === 1) {
        const previous = points[0];
        const out = applyScd1(previous, changes, seq);
        stale += out.stale;
        if (!out.winner) continue;
        const { row, sequence, deleted } = out.winner;
        added.push({ entityKey: key, point: { sequence, deleted } });
        if (previous) replaced.push({ entityKey: key, point: previous });
        if (deleted) deletes.push(Object.fromEntries(cdc.key.map((k) => [k, row.values[k]])));
        else upserts.push({ ...row.values, ...meta(row) });
      } else {
        const out = applyScd2(points, changes, seq);
        stale += out.stale;
        for (const c of out.added) added.push({ entityKey: key, point: { sequence: c.sequence, deleted: c.deleted } });
        for (const v of out.inserts) inserts.push({ ...v.row.values, valid_from: v.sequence, valid_to: v.validTo, is_current: v.validTo === null, ...meta(v.row) });
        const keyValues = parseEntityKey(key);
        for (const v of out.updates) closes.push({ ...Object.fromEntries(cdc.key.map((k, i) => [k, keyValues[i]])), valid_from: v.sequence, valid_to: v.validTo, is_current: v.validTo === null });
      }
    }

    const report = { kind: "cdc" as const, keys: byKey.size, applied: input.rows.length - stale, stale, upserted: upserts.length + inserts.length, deleted: deletes.length, historyUpdated: closes.length };
    return {
      stale,
      failed: [],
      report,
      async write(client): Promise<StateDelta> {
        if (cdc.scdType === 1) {
          await deleteResultRows(client, table, deletes);
          await upsertResultRows(client, table, upserts);
        } else {
          await updateResultColumns(client, table, closes, ["valid_to", "is_current"]);
          await insertResultRows(client, table, inserts);
        }
        return writePoints(client, pv, added, replaced);
      },
    };
  }
}

/** One text per entity: the key values as a JSON array (dates as ISO text). */
function entityKey(values: unknown[]): string {
  return JSON.stringify(values.map((v) => (v instanceof Date ? v.toISOString() : v)));
}

function parseEntityKey(key: string): unknown[] {
  return JSON.parse(key) as unknown[];
}
