// What a batch saw that its contract did not expect: unknown fields it rescued into _rescued, and
// fields whose values had the wrong type (quarantined). Collected while processBatch decides each
// row, only on those rows' paths (a batch without drift pays one empty collector, nothing per row),
// and handed to the worker with the committed batch, which raises (or updates) a schema change request from it
// (@sluice/services change-requests/observe-schema-drift.ts). Not part of the progress record: the
// samples are rows of data, kept only on the request its owners and approvers read.
import type { TFieldType } from "@sluice/pipeline-spec";
import type { SourceRecord } from "../source/source";

export const DRIFT_SAMPLES = 5;

export interface DriftField {
  field: string;
  /** rescued: an unknown field kept in _rescued; quarantined: a declared field whose value had another type. */
  outcome: "rescued" | "quarantined";
  /** The narrowest contract type every observed value fits ("json" when they disagree). */
  inferredType: TFieldType;
  /** Rows per type each value would be declared as ("null" for null), e.g. { json: 20, boolean: 3 }. */
  types: Partial<Record<TFieldType | "null", number>>;
  /** For a quarantined field: the type the contract declares (absent: an unknown field, quarantined by onUnknownField). */
  declaredType?: TFieldType;
  count: number;
  /** Kafka timestamps (ms) of the first and last row that showed it in this batch. */
  firstSeenMs: number;
  lastSeenMs: number;
  /** Up to DRIFT_SAMPLES whole rows, with their position. */
  samples: Record<string, unknown>[];
}

export type SchemaDrift = DriftField[];

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** The contract type a JSON value would be declared as. */
export function inferFieldType(v: unknown): TFieldType | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "number") return Number.isSafeInteger(v) ? "int" : "double";
  if (typeof v === "string")
    return ISO_TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v)) ? "timestamp" : "string";
  return "json";
}

/** One type for values seen as `a` and `b`: numbers widen (int < double), anything else that disagrees is json. */
export function mergeFieldTypes(
  a: TFieldType | undefined,
  b: TFieldType | undefined,
): TFieldType | undefined {
  if (a === undefined) return b;
  if (b === undefined || a === b) return a;
  const numbers = new Set<TFieldType>(["int", "double", "decimal"]);
  if (numbers.has(a) && numbers.has(b)) return a === "decimal" || b === "decimal" ? "decimal" : "double";
  if ((a === "timestamp" && b === "string") || (a === "string" && b === "timestamp")) return "string";
  return "json";
}

export class DriftCollector {
  private readonly byKey = new Map<string, DriftField & { typeSoFar: TFieldType | undefined }>();

  rescued(rescued: Record<string, unknown>, value: Record<string, unknown>, record: SourceRecord): void {
    for (const field in rescued) this.observe(field, "rescued", rescued[field], value, record, undefined);
  }

  get size(): number {
    return this.byKey.size;
  }

  /** A declared field with a value of another type, or (no declared type) an unknown field quarantined. */
  mismatch(
    field: string,
    declaredType: TFieldType | undefined,
    raw: unknown,
    value: Record<string, unknown>,
    record: SourceRecord,
  ): void {
    this.observe(field, "quarantined", raw, value, record, declaredType);
  }

  result(): SchemaDrift | undefined {
    if (this.byKey.size === 0) return undefined;
    return [...this.byKey.values()].map(({ typeSoFar, ...f }) => ({
      ...f,
      inferredType: typeSoFar ?? "json",
    }));
  }

  private observe(
    field: string,
    outcome: DriftField["outcome"],
    v: unknown,
    value: Record<string, unknown>,
    record: SourceRecord,
    declaredType: TFieldType | undefined,
  ): void {
    const key = `${outcome}:${field}`;
    let f = this.byKey.get(key);
    if (!f) {
      f = {
        field,
        outcome,
        inferredType: "json",
        typeSoFar: undefined,
        types: {},
        count: 0,
        firstSeenMs: record.timestamp,
        lastSeenMs: record.timestamp,
        samples: [],
        ...(declaredType ? { declaredType } : {}),
      };
      this.byKey.set(key, f);
    }
    f.count++;
    const type = inferFieldType(v);
    f.typeSoFar = mergeFieldTypes(f.typeSoFar, type);
    f.types[type ?? "null"] = (f.types[type ?? "null"] ?? 0) + 1;
    if (record.timestamp < f.firstSeenMs) f.firstSeenMs = record.timestamp;
    if (record.timestamp > f.lastSeenMs) f.lastSeenMs = record.timestamp;
    if (f.samples.length < DRIFT_SAMPLES)
      f.samples.push({ ...value, _partition: record.partition, _offset: record.offset });
  }
}
