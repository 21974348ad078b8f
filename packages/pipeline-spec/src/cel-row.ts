// The row as CEL sees it. One conversion per row, shared by every expression of the pipeline:
//   string → string, int → bigint (CEL ints are BigInt), decimal and double → number (IEEE double),
//   boolean → boolean, timestamp → Date, json → the parsed JSON value (its numbers are doubles),
//   a missing optional field → null.
// Inputs are accepted loosely (a decimal as "42.10" or 42.1, a timestamp as ISO text, epoch ms or Date)
// so the engine can pass its contract-typed row as it is.
import type { TContract, TFieldType } from "./contract";
import { celVariableName } from "./cel-environment";

declare const celRowBrand: unique symbol;
/** A row converted by toCelRow; expressions accept nothing else. */
export type TCelRow = Record<string, unknown> & { readonly [celRowBrand]: true };

type TConvert = (value: unknown) => unknown;

const toNumber: TConvert = (v) =>
  typeof v === "number"
    ? v
    : v == null
      ? null
      : typeof v === "string" || typeof v === "bigint"
        ? Number(v)
        : Number(String(v));

const toInt: TConvert = (v) => {
  if (typeof v === "bigint") return v;
  if (typeof v === "number") return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v === "string" && /^-?\d+$/.test(v)) return BigInt(v);
  return v ?? null;
};

const toDate: TConvert = (v) => {
  if (v instanceof Date || v == null) return v ?? null;
  if (typeof v === "string" || typeof v === "number") return new Date(v);
  if (typeof v === "bigint") return new Date(Number(v));
  return v;
};

const asIs: TConvert = (v) => v ?? null;

const CONVERTERS: Record<TFieldType, TConvert> = {
  string: asIs,
  int: toInt,
  decimal: toNumber,
  double: toNumber,
  boolean: asIs,
  timestamp: toDate,
  json: asIs,
};

/** A converter for the given fields of a contract (default: all). Build once; call per row. */
export function celRowConverter(
  contract: Pick<TContract, "fields">,
  fields: Iterable<string> = Object.keys(contract.fields),
): (row: Readonly<Record<string, unknown>>) => TCelRow {
  const plan = [...fields].flatMap((field) => {
    const spec = contract.fields[field];
    return spec ? [{ field, variable: celVariableName(field), convert: CONVERTERS[spec.type] }] : [];
  });
  return (row) => {
    const out: Record<string, unknown> = {};
    for (const { field, variable, convert } of plan) out[variable] = convert(row[field]);
    return out as TCelRow;
  };
}

/** Converts one row for CEL. In the hot path prefer CompiledSpec.toCelRow, which converts only the fields expressions use. */
export function toCelRow(
  row: Readonly<Record<string, unknown>>,
  contract: Pick<TContract, "fields">,
): TCelRow {
  return celRowConverter(contract)(row);
}
