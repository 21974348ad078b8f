// The fleet view: one row per pipeline (its serving version, pipelines.serving_version_id), problems first, with
// everything on-call reads in a glance; and a row for each other version that is not stopped (a
// version left running beside the serving one is never unseen). Bounded work for a page that refreshes every few seconds: a
// fixed number of queries for the whole fleet (each over every version at once), none per pipeline.
import type { PrismaClient } from "@sluice/db";
import { findRunningRollouts, type TFleetRollout } from "../rollouts/find-running-rollouts";
import { runPhase, type TRunPhase } from "../runs/run-state";
import { fleetStatus, STATUS_ORDER, type TFleetStatus } from "./fleet-status";
import { queryFleetVersions } from "./fleet-versions";
import { CURRENT_SAMPLE_MS, targetsOf, totalsOf } from "./get-pipeline-signals";
import { backlogSeconds, partitionBacklog, sampleOf } from "./offset-signals";
import {
  queryLatestOffsets,
  queryProcessedBuckets,
  queryNewestIngest,
  queryOffsetPoints,
  queryRangeTotals,
} from "./rollup-queries";
import { bucketRange, GRAIN_SECONDS } from "./time-range";

/** Sparklines: the last hour in one-minute buckets. */
const SPARK_RANGE_MS = 3600_000;
const SPARK_POINTS = 60;
/** The samples `lagging` looks at: the last 2 minutes, one per 10-second bucket. */
const RISING_WINDOW_MS = 120_000;
/** The fleet's "recent" processing rate: short, so a pause or a stall shows within a refresh or two. */
const FLEET_RATE_MS = 120_000;

export interface TFleetRow {
  name: string;
  description: string;
  ownerTeam: { slug: string; name: string };
  /** The version of this row: the serving one, or another that is not stopped; null when the pipeline has no version. */
  version: number | null;
  /** false: a version other than the serving one that is still running, paused or failed. */
  serving: boolean;
  status: TFleetStatus;
  /** Why (the error's first line for failed; what makes it lagging or running). */
  reason: string | null;
  /** Since when the status holds, where known: the failure, the pause or stop, the start of the backlog's rise. */
  since: Date | null;
  /** The run phase on the workers; null when never started. */
  phase: TRunPhase | null;
  /** Last hour, one point per minute: events/s arriving on the topic and rows/s committed. */
  sparkline: { t: Date[]; input: (number | null)[]; processing: number[] };
  /** Recent rates: input over the last 2 minutes of samples, processing over the last 5 minutes. */
  inputRate: number | null;
  processingRate: number;
  backlog: number | null;
  backlogSeconds: number | null;
  /** Age of the newest committed row by Kafka append time, and of the newest event by its own time (ms). */
  freshness: { ingestAgeMs: number | null; eventTimeAgeMs: number | null; targetMs: number };
  /** Last hour: violations per input row, and its target. */
  violationRate: number | null;
  violationTarget: number;
  /** Rows dead-lettered (undecodable) in the last hour. */
  deadLettersLastHour: number;
  lastCommitAt: Date | null;
  /** On the serving row: the pipeline's running rollout (its green version has no row of its own). */
  rollout: TFleetRollout | null;
}

export async function findFleet(db: PrismaClient, now = new Date()): Promise<TFleetRow[]> {
  const [versions, rollouts] = await Promise.all([queryFleetVersions(db), findRunningRollouts(db)]);
  // A running rollout's green shows as the serving row's rollout state, not as a row of its own.
  const pipelines = versions.filter((p) => p.serving || rollouts.get(p.name)?.greenVersion !== p.version);
  const ids = pipelines.flatMap((p) => (p.pv ? [p.pv] : []));
  const spark = bucketRange({ from: new Date(now.getTime() - SPARK_RANGE_MS), to: now }, SPARK_POINTS);
  const rising = bucketRange(
    { from: new Date(now.getTime() - RISING_WINDOW_MS), to: now },
    RISING_WINDOW_MS / 1000 / GRAIN_SECONDS,
  );
  const hourAgo = new Date(now.getTime() - SPARK_RANGE_MS);
  const [processed, offsets, risingOffsets, latest, hour, recent, newest] = await Promise.all([
    queryProcessedBuckets(db, ids, spark),
    queryOffsetPoints(db, ids, spark),
    queryOffsetPoints(db, ids, rising),
    queryLatestOffsets(db, ids, new Date(now.getTime() - CURRENT_SAMPLE_MS)),
    queryRangeTotals(db, ids, hourAgo, now),
    queryRangeTotals(db, ids, new Date(now.getTime() - FLEET_RATE_MS), now),
    queryNewestIngest(db, ids),
  ]);
  // Each result grouped by version once (not filtered per pipeline: 50 pipelines × thousands of rows).
  const by = {
    processed: byVersion(processed),
    offsets: byVersion(offsets),
    risingOffsets: byVersion(risingOffsets),
    latest: byVersion(latest),
    hour: byVersion(hour),
    recent: byVersion(recent),
    newest: byVersion(newest),
  };
  const of = <T>(rows: Map<string, T[]>, pv: string): T[] => rows.get(pv) ?? [];

  const rows = pipelines.map((p): TFleetRow => {
    const targets = targetsOf(p.spec_targets);
    const base = {
      name: p.name,
      description: p.description,
      ownerTeam: { slug: p.team_slug, name: p.team_name },
      version: p.version,
      serving: p.serving,
      rollout: (p.serving && rollouts.get(p.name)) || null,
    };
    const phase = p.status && p.desired_state ? runPhase(p.status, p.desired_state) : null;
    const pv = p.pv;
    if (!pv) {
      return {
        ...base,
        status: "not started",
        reason: "no version registered",
        since: null,
        phase,
        sparkline: { t: [], input: [], processing: [] },
        inputRate: null,
        processingRate: 0,
        backlog: null,
        backlogSeconds: null,
        freshness: { ingestAgeMs: null, eventTimeAgeMs: null, targetMs: targets.freshnessMs },
        violationRate: null,
        violationTarget: targets.violationRate,
        deadLettersLastHour: 0,
        lastCommitAt: null,
      };
    }
    const sparkInput = new Map(of(by.offsets, pv).map((o) => [o.t.getTime(), o.input_rate]));
    const sparkRows = new Map(of(by.processed, pv).map((r) => [r.t.getTime(), r.input_rows]));
    // The recent input rate from the 10-second samples of the last 2 minutes (first to last sample).
    const risingPoints = of(by.risingOffsets, pv)
      .filter((x) => x.t >= rising.from)
      .map((x) => ({ t: x.t, inputRate: x.input_rate, backlog: x.backlog }));
    const rates = risingPoints.map((x) => x.inputRate).filter((x): x is number => x !== null);
    const inputRate = rates.length > 0 ? rates.reduce((a, b) => a + b, 0) / rates.length : null;
    const processingRate = (of(by.recent, pv)[0]?.input_rows ?? 0) / (FLEET_RATE_MS / 1000);
    const current = of(by.latest, pv).map(sampleOf);
    const backlog = current.length > 0 ? current.reduce((sum, s) => sum + partitionBacklog(s), 0) : null;
    const recentBacklog = risingPoints.map((x) => x.backlog ?? 0);
    const fresh = of(by.newest, pv)[0];
    const ingestAgeMs = fresh ? Math.max(0, now.getTime() - fresh.ingest_time_max.getTime()) : null;
    const eventTime = p.event_time_max;
    const status = fleetStatus({
      phase,
      lastError: p.last_error,
      recentBacklog,
      inputRate,
      ingestAgeMs,
      freshnessTargetMs: targets.freshnessMs,
    });
    const since =
      status.status === "failed"
        ? p.last_error_at
        : status.status === "paused" || status.status === "stopped"
          ? p.run_updated_at
          : status.status === "lagging"
            ? (risingSince(risingPoints) ??
              (fresh ? new Date(fresh.ingest_time_max.getTime() + targets.freshnessMs) : null))
            : null;
    // Only a running version drains its backlog; paused, stopped or failed it does not, whatever it did before.
    const draining = phase === "running";
    const totals = totalsOf(of(by.hour, pv)[0]);
    const violationCount = Object.values(totals.violations).reduce((a, b) => a + b, 0);
    return {
      ...base,
      ...status,
      since,
      phase,
      sparkline: {
        t: spark.starts,
        input: spark.starts.map((t) => sparkInput.get(t.getTime()) ?? null),
        processing: spark.starts.map((t) => (sparkRows.get(t.getTime()) ?? 0) / spark.stepSeconds),
      },
      inputRate,
      processingRate,
      backlog,
      backlogSeconds: backlogSeconds(backlog, draining ? processingRate : 0),
      freshness: {
        ingestAgeMs,
        eventTimeAgeMs: eventTime ? now.getTime() - new Date(eventTime).getTime() : null,
        targetMs: targets.freshnessMs,
      },
      violationRate: totals.inputRows > 0 ? violationCount / totals.inputRows : null,
      violationTarget: targets.violationRate,
      deadLettersLastHour: totals.deadLetter,
      lastCommitAt: fresh?.last_committed_at ?? null,
    };
  });
  return rows.sort(
    (a, b) =>
      STATUS_ORDER[a.status] - STATUS_ORDER[b.status] ||
      a.name.localeCompare(b.name) ||
      (b.version ?? 0) - (a.version ?? 0),
  );
}

/** The start of the backlog's current rise: the first bucket of the streak of growing samples that ends now. */
function risingSince(points: { t: Date; backlog: number | null }[]): Date | null {
  let i = points.length - 1;
  if (i < 1) return null;
  while (i > 0 && (points[i - 1]!.backlog ?? 0) < (points[i]!.backlog ?? 0)) i--;
  return i < points.length - 1 ? points[i]!.t : null;
}

function byVersion<T extends { pv: string }>(rows: T[]): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const r of rows) {
    const list = map.get(r.pv);
    if (list) list.push(r);
    else map.set(r.pv, [r]);
  }
  return map;
}
