// What the evaluator knows about a pipeline and the fleet at one tick — read from the same rollups,
// offset samples and run state as the dashboards (find-alert-signals.ts) — in a shape pure functions
// evaluate, so recorded series can be replayed in unit tests.
import type { TRunPhase } from "../runs/run-state";
import type { TStateHorizon } from "./state-horizon";

/** One 10-second bucket of the workers' offset samples (offset-signals.ts offsetPoints). */
export interface TBacklogPoint {
  t: Date;
  backlog: number | null;
  /** Events/s appended to the topic since the previous sample; null without two samples. */
  inputRate: number | null;
}

/** Rows over the rate rules' window (the last 5 minutes). */
export interface TAlertWindow {
  /** The input's rows; for an output, the rows that reached it. */
  inputRows: number;
  violations: number;
  quarantinedOrDead: number;
  /** Rows too late to count: the pipeline's (late for every output), or late for one output. */
  late: number;
}

export interface TOutputAlertSignals {
  name: string;
  window: TAlertWindow;
  stateRows: { t: Date; rows: number }[];
}

export interface TPipelineAlertSignals {
  pipelineId: string;
  pipeline: string;
  version: number | null;
  ownerTeamId: string;
  phase: TRunPhase | null;
  lastError: string | null;
  /** While paused or stopped by a command: who asked, when and why (the backlog's summary says it). */
  heldBy: { action: string; actor: string; at: Date; reason: string } | null;
  consecutiveFailures: number;
  /** The trigger interval (ms); null for availableNow pipelines. */
  triggerMs: number | null;
  /** A batch in flight since, or the next batch due at (while running); null otherwise. */
  waitingSince: Date | null;
  /** The last few minutes of offset samples, oldest first. */
  recent: TBacklogPoint[];
  /** Rows/s committed over the last 2 minutes. */
  processingRate: number;
  /** Age of the newest committed row by Kafka append time (ms); null before the first. */
  ingestAgeMs: number | null;
  freshnessTargetMs: number;
  violationTarget: number;
  /** Last 5 minutes. */
  window: TAlertWindow;
  /** State rows of the last batch of each minute over the last 30 minutes, oldest first. */
  stateRows: { t: Date; rows: number }[];
  /**
   * Each output the serving version declares (a pipeline with several outputs): the same window and
   * state, its own — what a rule scoped to that output (alert_rules.output) judges. Empty otherwise.
   */
  outputs: TOutputAlertSignals[];
  /** How far back in event time the spec's state reaches by design (state-horizon.ts); null: none. */
  stateHorizon: TStateHorizon | null;
  /** When this version's state began: its first commit, or that of the version it continues; null before any. */
  stateSince: Date | null;
  /** Input rate per minute over the same 30 minutes (null where unknown). */
  stateWindowInputRates: (number | null)[];
  /** Values no declarable type holds, as the workers recorded them for this pipeline (change-requests/producer-faults.ts). */
  producerFaults: {
    field: string;
    declaredType: string | null;
    types: Record<string, number>;
    rows: number;
    lastSeen: Date;
    sample: Record<string, unknown> | null;
  }[];
  /** Webhook deliveries that failed for good in the last 5 minutes. */
  webhookFailures: number;
}

export interface TFleetAlertSignals {
  workers: { id: string; host: string; lastHeartbeatAt: Date; stoppedAt: Date | null }[];
  /** Pipeline versions that should run (desired running, not failed). */
  runningPipelines: number;
}
