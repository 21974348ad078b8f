// What a pipeline writes: the columns of its result, which sink keys, groupBy and idempotency keys must
// name. Sluice's own columns (_rescued, source metadata) are added by the engine and are not listed here.
import type { TAggregate } from "./aggregate-schema";
import { SCD2_COLUMNS, type TCdc } from "./cdc-schema";
import { contractColumns, type TColumn, type TContract, type TFieldSpec } from "./contract";
import type { TMeasure } from "./measure";
import type { TTransform } from "./row-schema";

export const WINDOW_COLUMNS = ["window_start", "window_end"] as const;

/** The columns that identify one aggregate result row: groupBy, plus window_start when windowed. */
export function aggregateResultKey(aggregate: Pick<TAggregate, "groupBy" | "window">): string[] {
  return [...aggregate.groupBy, ...(aggregate.window ? ["window_start"] : [])];
}

/** The key of a CDC target table: the entity key (SCD1), plus valid_from for SCD2 history rows. */
export function cdcResultKey(cdc: Pick<TCdc, "key" | "scdType">): string[] {
  return cdc.scdType === 2 ? [...cdc.key, "valid_from"] : [...cdc.key];
}

/**
 * A measure's result type: counts are ints, sums keep the column's type, avg of int is double; min, max
 * and avg are null when no row contributed (a conditional measure in a window without matching rows).
 */
export function measureResultType(
  measure: TMeasure,
  contract: Pick<TContract, "fields">,
): TFieldSpec | undefined {
  if (measure.fn === "count" || measure.fn === "count_distinct") return { type: "int", optional: false };
  const column = measure.column === undefined ? undefined : contract.fields[measure.column];
  if (!column) return undefined;
  if (measure.fn === "sum") return { type: column.type, optional: false };
  if (measure.fn === "avg") return { type: column.type === "decimal" ? "decimal" : "double", optional: true };
  return { type: column.type, optional: true };
}

export interface TOutputShape {
  contract: Pick<TContract, "fields">;
  transform?: Pick<TTransform, "select"> | undefined;
  aggregate?: TAggregate | undefined;
  cdc?: Pick<TCdc, "key" | "scdType" | "sequenceBy"> | undefined;
}

/**
 * The result's columns, in table order. References to unknown columns are skipped here: validateSpec
 * reports them, and this function is also used to check them.
 */
export function outputColumns(spec: TOutputShape): TColumn[] {
  const { fields } = spec.contract;
  const column = (name: string): TColumn[] => {
    const field = fields[name];
    return field ? [{ name, type: field.type, optional: field.optional }] : [];
  };
  if (spec.aggregate) {
    const { aggregate } = spec;
    const window: TColumn[] = aggregate.window
      ? WINDOW_COLUMNS.map((name) => ({ name, type: "timestamp", optional: false }))
      : [];
    const measures = Object.keys(aggregate.measures)
      .sort()
      .flatMap((name): TColumn[] => {
        const type = measureResultType(aggregate.measures[name] as TMeasure, spec.contract);
        return type ? [{ name, ...type }] : [];
      });
    return [...aggregate.groupBy.flatMap(column), ...window, ...measures];
  }
  if (spec.cdc) {
    const sequence = fields[spec.cdc.sequenceBy];
    const history: TColumn[] =
      spec.cdc.scdType === 2 && sequence
        ? [
            { name: SCD2_COLUMNS[0], type: sequence.type, optional: false },
            { name: SCD2_COLUMNS[1], type: sequence.type, optional: true },
            { name: SCD2_COLUMNS[2], type: "boolean", optional: false },
          ]
        : [];
    return [...contractColumns(spec), ...history];
  }
  if (spec.transform?.select) return spec.transform.select.flatMap(column);
  return contractColumns(spec);
}
