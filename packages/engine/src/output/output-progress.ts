// What the progress record keeps of each output of a pipeline with several outputs or a join, in a
// file of its own: the record's schema (store/progress-record.ts) and the staged result that fills it
// (runner/staged-result.ts) both name it, and neither may import the other.
import type { OperatorReport } from "../operator/result-operator";
import type { OutputOutcomes } from "./screen-output";

/** One output in the progress record. */
export interface OutputProgress {
  name: string;
  /** The table it writes, or "webhook". */
  sink: string;
  watermark: string | null;
  outcomes: OutputOutcomes;
  lateAccepted: number;
  /** Violations of this output's own expectations (warn: kept; drop: dropped from this output). */
  expectations: Record<string, number>;
  stateRows: number;
  stateBytes: number;
  operator?: OperatorReport;
}
