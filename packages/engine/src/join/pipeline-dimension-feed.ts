// A join's dimension read from another pipeline's committed SCD2 history (dimension-pipeline.ts finds
// it). Its versions are that pipeline's rows — valid from valid_from, until valid_to; a valid_to no row
// starts at is a delete — read from the serving version's table (so after a rollout the promoted one)
// when rows need them, never copied into this join's state. The dimension's watermark is that version's
// committed watermark: rows before it are final there (a change behind it is late and never reaches its
// table), so decide-join's "the dimension passed the row" means "the other pipeline committed past it".
// Only committed data is read: the row's fate, decided from it, is committed once with the row's batch.
// A paused, stopped or failed dimension pipeline commits nothing: its watermark stands still, and rows
// wait until waitFor, then onMissing applies. A reset or a rebuild of it moves its watermark back: rows
// wait again until it has committed past them; rows already decided stay as they were.
import { quoteIdentifier, type TFieldType, type TPipelineDimension } from "@sluice/pipeline-spec";
import type pg from "pg";
import { findCheckpoint } from "../store/checkpoint-store";
import type { DimensionFeed } from "./dimension-feed";
import { entityKeyOf, jsonValue, type DimensionCheckpoint, type DimensionRead } from "./dimension-reader";
import type { DimensionVersion } from "./dimension-versions";
import { findServingDimension } from "./dimension-pipeline";

export class PipelineDimensionFeed implements DimensionFeed {
  readonly sequence = undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly dim: TPipelineDimension,
  ) {}

  /**
   * The serving version's committed watermark, as it is now — not the highest this join saw: after a
   * reset or a rebuild of that pipeline its table holds less, and its watermark says so (rows wait).
   */
  private async watermark(): Promise<Date | null> {
    const serving = await findServingDimension(this.pool, this.dim);
    return serving ? ((await findCheckpoint(this.pool, serving.versionId))?.watermark ?? null) : null;
  }

  async read(): Promise<DimensionRead> {
    // No changes of its own: the versions stay in the other pipeline's table (versions below).
    return {
      changes: [],
      deadLetters: [],
      records: 0,
      endOffsets: {},
      clocks: {},
      watermark: await this.watermark(),
      backlog: 0,
    };
  }

  /** Rows wait and the other pipeline committed past where this join was: release what it can. */
  async hasUnread(cp: DimensionCheckpoint): Promise<boolean> {
    if (!cp.held?.rows) return false;
    const theirs = await this.watermark();
    return theirs !== null && (!cp.watermark || theirs > new Date(cp.watermark));
  }

  /**
   * The committed versions of these keys, read after the watermark (read): both are committed in one
   * transaction there, so the table holds at least every version the watermark vouches for.
   */
  async versions(keys: string[]): Promise<Map<string, DimensionVersion[]>> {
    const out = new Map<string, DimensionVersion[]>();
    const serving = keys.length > 0 ? await findServingDimension(this.pool, this.dim) : undefined;
    if (!serving) return out;
    const fields = this.dim.contract.fields;
    const keyCols = this.dim.key.map(quoteIdentifier);
    const valueCols = Object.keys(fields).filter((f) => !this.dim.key.includes(f));
    const parsed = keys.map((k) => JSON.parse(k) as unknown[]);
    const res = await this.pool.query<Record<string, unknown> & { valid_from: Date; valid_to: Date | null }>(
      `SELECT ${[...keyCols, ...valueCols.map(quoteIdentifier)].join(", ")}, valid_from, valid_to FROM ${serving.tableSql}
        WHERE (${keyCols.map((c) => `${c}::text`).join(", ")}) IN (SELECT * FROM unnest(${keyCols.map((_, i) => `$${i + 1}::text[]`).join(", ")}))
        ORDER BY ${keyCols.join(", ")}, valid_from`,
      this.dim.key.map((_, i) => parsed.map((values) => String(values[i]))),
    );
    const history = new Map<string, HistoryRow[]>();
    for (const row of res.rows) {
      const key = entityKeyOf(this.dim.key.map((k) => typed(fields[k]!.type, row[k])));
      let list = history.get(key);
      if (!list) history.set(key, (list = []));
      list.push({
        fromMs: row.valid_from.getTime(),
        toMs: row.valid_to?.getTime() ?? null,
        values: Object.fromEntries(
          Object.entries(fields).map(([name, f]) => [name, jsonValue(typed(f.type, row[name]))]),
        ),
      });
    }
    for (const [key, rows] of history) out.set(key, historyVersions(rows));
    return out;
  }

  async close(): Promise<void> {}
}

interface HistoryRow {
  fromMs: number;
  toMs: number | null;
  values: Record<string, unknown>;
}

/**
 * One key's SCD2 rows (ordered by valid_from) as the join's versions: each row a version from its
 * valid_from; a valid_to where no row starts is a delete (no version from then on).
 */
export function historyVersions(rows: readonly HistoryRow[]): DimensionVersion[] {
  const versions: DimensionVersion[] = [];
  rows.forEach((row, i) => {
    versions.push({ validFromMs: row.fromMs, sequence: null, deleted: false, values: row.values });
    const next = rows[i + 1];
    if (row.toMs !== null && (!next || next.fromMs > row.toMs))
      versions.push({ validFromMs: row.toMs, sequence: null, deleted: true, values: {} });
  });
  return versions;
}

/** A column's value as the contract types it (pg gives bigint and numeric as text). */
function typed(type: TFieldType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if ((type === "int" || type === "double") && typeof v === "string") return Number(v);
  return v;
}
