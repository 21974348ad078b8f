// The closed set of alert rule kinds: what each watches, the unit of its threshold, the defaults every
// pipeline gets, and the runbook hint a notification carries. One home: the evaluator, the console,
// the CLI and the Prometheus rules file (docs/alerting/) all follow this table.

export const RULE_KINDS = [
  "backlog_growing",
  "processing_below_input",
  "freshness",
  "violation_rate",
  "dead_letter_rate",
  "late_rate",
  "batch_failures",
  "state_growth",
  "webhook_failures",
  "batch_stalled",
  "producer_fault",
  "worker_heartbeat_missing",
  "no_worker_alive",
] as const;
export type TRuleKind = (typeof RULE_KINDS)[number];

export const SEVERITIES = ["critical", "warning", "info"] as const;
export type TSeverity = (typeof SEVERITIES)[number];
export const SEVERITY_ORDER: Record<TSeverity, number> = { critical: 0, warning: 1, info: 2 };

export type TMeasure = "seconds" | "ratio" | "share" | "count" | "growth";

export interface TRuleKindInfo {
  /** "pipeline": one rule per pipeline, paging its owner team; "fleet": one rule for the whole fleet. */
  scope: "pipeline" | "fleet";
  title: string;
  /** What the threshold means, for forms and messages. */
  unit: string;
  /** How a value of this kind is written (formatRuleValue): "30 s", "0.9×", "1.2%", "3", "+50%". */
  measure: TMeasure;
  /** Allowed threshold range (inclusive). */
  min: number;
  max: number;
  /** The threshold may be left empty to use the pipeline spec's target. */
  specTarget: boolean;
  /**
   * A rule of this kind may watch one output of a pipeline with several outputs (alert_rules.output):
   * the kinds whose signal differs per output — late rows, an output's own expectations, its state.
   */
  perOutput: boolean;
  defaults: { severity: TSeverity; threshold: number | null; forSeconds: number; clearForSeconds: number };
  runbook: string;
}

export const RULE_KIND_INFO: Record<TRuleKind, TRuleKindInfo> = {
  backlog_growing: {
    scope: "pipeline",
    title: "Backlog growing while input is steady",
    unit: "seconds of input waiting",
    measure: "seconds",
    min: 0,
    max: 86_400,
    specTarget: false,
    perOutput: false,
    defaults: { severity: "critical", threshold: 30, forSeconds: 60, clearForSeconds: 120 },
    runbook:
      "The pipeline is falling behind, not absorbing a burst. Paused or stopped on purpose? The summary says by whom, when and why: resume it when that is over. Otherwise check that it is running, its batch durations and its workers; raise maxOffsetsPerTrigger or add workers.",
  },
  processing_below_input: {
    scope: "pipeline",
    title: "Processing rate below input rate",
    unit: "ratio of processing to input rate (fires below it)",
    measure: "ratio",
    min: 0.01,
    max: 1,
    specTarget: false,
    perOutput: false,
    defaults: { severity: "warning", threshold: 0.9, forSeconds: 300, clearForSeconds: 120 },
    runbook:
      "Batches process fewer rows per second than arrive: look at the slowest phase on the pipeline page (read, process, commit) and at the workers' load.",
  },
  freshness: {
    scope: "pipeline",
    title: "Freshness over target",
    unit: "seconds since the newest committed row arrived",
    measure: "seconds",
    min: 1,
    max: 604_800,
    specTarget: true,
    perOutput: false,
    defaults: { severity: "critical", threshold: null, forSeconds: 60, clearForSeconds: 120 },
    runbook:
      "Rows waiting on the topic are not reaching the sink within the freshness target: check the run state, failed batches and the backlog.",
  },
  violation_rate: {
    scope: "pipeline",
    title: "Expectation violation rate over threshold",
    unit: "share of input rows violating an expectation (last 5 minutes)",
    measure: "share",
    min: 0,
    max: 1,
    specTarget: true,
    perOutput: true,
    defaults: { severity: "warning", threshold: null, forSeconds: 120, clearForSeconds: 300 },
    runbook:
      "An upstream producer changed what it sends: the pipeline page lists violations per expectation; fix the producer or the expectation.",
  },
  dead_letter_rate: {
    scope: "pipeline",
    title: "Quarantine / dead-letter rate over threshold",
    unit: "share of input rows quarantined or dead-lettered (last 5 minutes)",
    measure: "share",
    min: 0,
    max: 1,
    specTarget: false,
    perOutput: false,
    defaults: { severity: "warning", threshold: 0.01, forSeconds: 120, clearForSeconds: 300 },
    runbook:
      "Rows are undecodable or break the contract: the Dead letters section groups them by reason; fix the producer, then replay.",
  },
  late_rate: {
    scope: "pipeline",
    title: "Late rows over threshold",
    unit: "share of rows arriving too late to count (last 5 minutes): of the input, or of the rows reaching one output",
    measure: "share",
    min: 0,
    max: 1,
    specTarget: false,
    perOutput: true,
    defaults: { severity: "warning", threshold: 0.05, forSeconds: 120, clearForSeconds: 300 },
    runbook:
      "Rows arrive later than the watermark delay plus the allowed lateness: they are dead letters or dropped, and the results miss them. Check the producer's delays (a backfill, a stuck partition) before widening allowedLateness; for one output, its Late rows chart on the pipeline page shows which.",
  },
  batch_failures: {
    scope: "pipeline",
    title: "Pipeline failed or batches failing",
    unit: "consecutive failed batch attempts",
    measure: "count",
    min: 1,
    max: 1000,
    specTarget: false,
    perOutput: false,
    defaults: { severity: "critical", threshold: 3, forSeconds: 0, clearForSeconds: 60 },
    runbook:
      'The pipeline page shows the last error and the failed batch\'s sample rows; fix the cause, then restart (sluice restart <spec> "reason").',
  },
  state_growth: {
    scope: "pipeline",
    title: "State growing without bound",
    unit: "growth of state rows over the last 30 minutes after the spec's state horizon filled, input steady (0.5 = +50%)",
    measure: "growth",
    min: 0.01,
    max: 1000,
    specTarget: false,
    perOutput: true,
    defaults: { severity: "warning", threshold: 0.5, forSeconds: 600, clearForSeconds: 600 },
    runbook:
      "Dedup/window/CDC state kept growing after its horizon (dedupe within, watermarkDelay + allowedLateness, window size) had filled: the watermark may be stuck (an idle partition, event times in the future) or the keys are unbounded.",
  },
  webhook_failures: {
    scope: "pipeline",
    title: "Webhook deliveries failing",
    unit: "deliveries that failed for good in the last 5 minutes",
    measure: "count",
    min: 1,
    max: 1_000_000,
    specTarget: false,
    perOutput: false,
    defaults: { severity: "warning", threshold: 1, forSeconds: 0, clearForSeconds: 300 },
    runbook:
      "The receiver refuses or is down: the pipeline page lists failed deliveries with their errors; fix the receiver, then re-queue them.",
  },
  batch_stalled: {
    scope: "pipeline",
    title: "Running pipeline with no batch",
    unit: "trigger intervals without a batch starting or finishing",
    measure: "count",
    min: 2,
    max: 10_000,
    specTarget: false,
    perOutput: false,
    defaults: { severity: "critical", threshold: 10, forSeconds: 0, clearForSeconds: 30 },
    runbook:
      "The pipeline should run but no batch happens: check that workers are alive (Fleet), the reconciler's log and Redis.",
  },
  producer_fault: {
    scope: "pipeline",
    title: "Producer sends values no contract type holds",
    unit: "rows quarantined for values no declarable type holds (fires while seen in the last 10 minutes)",
    measure: "count",
    min: 1,
    max: 1_000_000_000,
    specTarget: false,
    perOutput: false,
    defaults: { severity: "warning", threshold: 1, forSeconds: 0, clearForSeconds: 600 },
    runbook:
      "Not a schema change anyone can approve: the producer sends corrupt values (the summary has the field, the types and a sample). Tell the source's owner; the Change requests page groups the fault across the topic's pipelines and versions, and its quarantined rows can be replayed once fixed.",
  },
  worker_heartbeat_missing: {
    scope: "fleet",
    title: "A worker's heartbeat is missing",
    unit: "seconds since a worker's last heartbeat",
    measure: "seconds",
    min: 5,
    max: 86_400,
    specTarget: false,
    perOutput: false,
    defaults: { severity: "warning", threshold: 30, forSeconds: 0, clearForSeconds: 30 },
    runbook:
      "A worker process stopped without shutting down (killed, host gone): its batches move to other workers; restart it or remove the host.",
  },
  no_worker_alive: {
    scope: "fleet",
    title: "No worker alive",
    unit: "seconds since the newest heartbeat of any worker",
    measure: "seconds",
    min: 5,
    max: 86_400,
    specTarget: false,
    perOutput: false,
    defaults: { severity: "critical", threshold: 30, forSeconds: 0, clearForSeconds: 30 },
    runbook:
      "Nothing runs pipelines: start workers (npm run worker) and check their log; this alert comes from the console's watchdog.",
  },
};

export const PIPELINE_RULE_KINDS = RULE_KINDS.filter((k) => RULE_KIND_INFO[k].scope === "pipeline");
export const FLEET_RULE_KINDS = RULE_KINDS.filter((k) => RULE_KIND_INFO[k].scope === "fleet");
export const OUTPUT_RULE_KINDS = RULE_KINDS.filter((k) => RULE_KIND_INFO[k].perOutput);

/** A rule as the audit log names it: "late_rate (output fraud) on settlement-views". */
export function ruleLabel(kind: TRuleKind, output: string | null, pipeline: string): string {
  return `${kind}${output === null ? "" : ` (output ${output})`} on ${pipeline}`;
}

/** A rule's title as pages and notifications name it: the kind's, and the output it watches. */
export function ruleTitle(kind: TRuleKind, output: string | null): string {
  return output === null ? RULE_KIND_INFO[kind].title : `${RULE_KIND_INFO[kind].title} — output ${output}`;
}

/** A rule's value or threshold with its unit, as the console and notifications write it. */
export function formatRuleValue(kind: TRuleKind, value: number | null): string {
  if (value === null || !Number.isFinite(value)) return "—";
  const round = (n: number) => Number(n.toPrecision(3)).toLocaleString("en-US");
  switch (RULE_KIND_INFO[kind].measure) {
    case "seconds":
      return value >= 7200
        ? `${round(value / 3600)} h`
        : value >= 600
          ? `${round(value / 60)} min`
          : `${round(value)} s`;
    case "ratio":
      return `${round(value)}×`;
    case "share":
      return `${round(value * 100)}%`;
    case "growth":
      return `${value >= 0 ? "+" : ""}${round(value * 100)}%`;
    case "count":
      // A bare number reads as nothing on a page: say what was counted.
      return `${round(value)} ${COUNTED[kind] ?? ""}`.trim();
  }
}

/** What a "count" rule counts, after its value ("3 failed attempts"). */
const COUNTED: Partial<Record<TRuleKind, string>> = {
  batch_failures: "failed attempts",
  webhook_failures: "failed deliveries",
  batch_stalled: "trigger intervals",
  producer_fault: "rows quarantined",
};

/** What a threshold typed into the rule form means, beside the input: "s", "× input", "0–1 share", … */
export function thresholdUnit(kind: TRuleKind): string {
  switch (RULE_KIND_INFO[kind].measure) {
    case "seconds":
      return "s";
    case "ratio":
      return "× input rate";
    case "share":
      return "share, 0–1";
    case "growth":
      return "growth, 0.5 = +50%";
    case "count":
      return RULE_KIND_INFO[kind].unit.split(" (")[0]!;
  }
}
