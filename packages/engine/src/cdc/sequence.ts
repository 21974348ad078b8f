// Sequence values of CDC changes: one canonical text per value (how cdc_state stores it) and an
// order by the sequenceBy column's type — never by arrival, never by processing time.
import type { TFieldType } from "@sluice/pipeline-spec";
import { canonicalDecimal, compareDecimal, parseDecimal } from "../window/decimal";

export interface SequenceType {
  canonical(value: unknown): string;
  compare(a: string, b: string): number;
}

export function sequenceType(type: TFieldType): SequenceType {
  switch (type) {
    case "int":
      return {
        canonical: (v) => BigInt(v as string | number).toString(),
        compare: (a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0),
      };
    case "decimal":
      return {
        canonical: (v) => canonicalDecimal(v),
        compare: (a, b) => compareDecimal(parseDecimal(a), parseDecimal(b)),
      };
    case "double":
      return { canonical: (v) => String(Number(v)), compare: (a, b) => Math.sign(Number(a) - Number(b)) };
    case "timestamp":
      return {
        canonical: (v) => (v instanceof Date ? v : new Date(v as string)).toISOString(),
        compare: (a, b) => Math.sign(Date.parse(a) - Date.parse(b)),
      };
    default:
      throw new Error(`sequenceBy of type ${type} cannot order changes`);
  }
}
