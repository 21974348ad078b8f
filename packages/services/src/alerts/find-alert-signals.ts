// The evaluator's reads for one tick: each pipeline's serving version (pipelines.serving_version_id) with its run state,
// offset samples, rollup totals and freshness — the same queries the fleet view uses (signals/), a
// fixed number of them for the whole fleet — and the workers' registry for the fleet rules.
import { rowsOf, sql, tables, type PrismaClient } from "@sluice/db";
import { parseDuration } from "@sluice/pipeline-spec";
import { z } from "zod";
import { runPhase } from "../runs/run-state";
import { targetsOf } from "../signals/get-pipeline-signals";
import { offsetPoints, sampleOf } from "../signals/offset-signals";
import {
  queryBatchBuckets,
  queryNewestIngest,
  queryOffsetBuckets,
  queryOutputBuckets,
  queryRangeTotals,
  type TOutputBucketRow,
} from "../signals/rollup-queries";
import { declaredOutputs } from "../pipelines/declared-outputs";
import { bucketRange, GRAIN_SECONDS } from "../signals/time-range";
import type { TFleetAlertSignals, TOutputAlertSignals, TPipelineAlertSignals } from "./alert-signals";
import { stateHorizonOf } from "./state-horizon";
import { findFaultObservations, type TFaultObservation } from "../change-requests/producer-faults";

/** Offset samples the backlog rules look at: the last 2 minutes, one per 10-second bucket. */
const RECENT_MS = 120_000;
/** The window of the rate rules (violations, dead letters, webhook failures). */
const WINDOW_MS = 5 * 60_000;
/** The processing rate's window. */
const PROCESSING_MS = 120_000;
/** State growth is judged over 30 one-minute points. */
const STATE_WINDOW_MS = 30 * 60_000;

const ZTrigger = z.object({ trigger: z.object({ every: z.string().optional() }).optional() });

function triggerMsOf(spec: unknown): number | null {
  const parsed = ZTrigger.safeParse(spec);
  const every = parsed.success ? (parsed.data.trigger?.every ?? "2s") : "2s";
  try {
    return parsed.success && parsed.data.trigger && parsed.data.trigger.every === undefined
      ? null
      : parseDuration(every);
  } catch {
    return null;
  }
}

/**
 * When each version's state began: the first committed batch of the version or of the versions it
 * continues (a continued version keeps its predecessor's state). One index probe per version.
 */
async function findStateSince(db: PrismaClient, pipelineIds: string[]): Promise<Map<string, Date>> {
  const versions = await db.pipelineVersion.findMany({
    where: { pipelineId: { in: pipelineIds } },
    select: { id: true, continuedFromId: true },
  });
  if (versions.length === 0) return new Map();
  const firsts = await rowsOf(
    db,
    tables
      .selectFrom(sql<{ id: string }>`unnest(${versions.map((v) => v.id)}::text[])`.as<"v">(sql`v(id)`))
      .select((eb) => [
        "v.id as pv",
        eb
          .selectFrom("batch_rollup as r")
          .select((eb) => eb.fn.min("r.bucket_start").as("first"))
          .whereRef("r.pipeline_version_id", "=", "v.id")
          .where("r.grain_seconds", "=", GRAIN_SECONDS)
          .as("first"),
      ]),
  );
  const first = new Map(firsts.flatMap((f) => (f.first ? [[f.pv, f.first] as const] : [])));
  const from = new Map(versions.map((v) => [v.id, v.continuedFromId]));
  const since = new Map<string, Date>();
  for (const v of versions) {
    let earliest: Date | undefined;
    const seen = new Set<string>();
    for (let id: string | null | undefined = v.id; id && !seen.has(id); id = from.get(id)) {
      seen.add(id);
      const t = first.get(id);
      if (t && (!earliest || t < earliest)) earliest = t;
    }
    if (earliest) since.set(v.id, earliest);
  }
  return since;
}

/** A pipeline's faults, one per field and declared type however many of its versions recorded it. */
function faultsOf(observations: TFaultObservation[]): TPipelineAlertSignals["producerFaults"] {
  const by = new Map<string, TPipelineAlertSignals["producerFaults"][number]>();
  for (const o of observations) {
    const key = `${o.field}:${o.declaredType}`;
    const f = by.get(key) ?? {
      field: o.field,
      declaredType: o.declaredType,
      types: {},
      rows: 0,
      lastSeen: o.lastSeen,
      sample: null,
    };
    for (const [t, n] of Object.entries(o.types)) f.types[t] = (f.types[t] ?? 0) + n;
    f.rows += o.rows;
    if (o.lastSeen > f.lastSeen) f.lastSeen = o.lastSeen;
    f.sample ??= o.samples[0] ?? null;
    by.set(key, f);
  }
  return [...by.values()];
}

/**
 * Each declared output's window and state from its rollups: the rows that reached it and were late for
 * it since `windowFrom` (10-second buckets), its own expectations' violations (the range totals keep them
 * as "<output>:<expectation>"), and its state rows per minute.
 */
function outputSignals(
  names: string[],
  window: TOutputBucketRow[],
  windowFrom: Date,
  violations: Record<string, number>,
  state: TOutputBucketRow[],
): TOutputAlertSignals[] {
  return names.map((name) => {
    const recent = window.filter((r) => r.output === name && r.t >= windowFrom);
    return {
      name,
      window: {
        inputRows: recent.reduce((n, r) => n + r.rows, 0),
        late: recent.reduce((n, r) => n + r.late, 0),
        violations: Object.entries(violations)
          .filter(([k]) => k.startsWith(`${name}:`))
          .reduce((n, [, v]) => n + Number(v), 0),
        // Quarantine and dead letters happen before the outputs split: only the pipeline's.
        quarantinedOrDead: 0,
      },
      stateRows: state.filter((r) => r.output === name).map((r) => ({ t: r.t, rows: r.state_rows })),
    };
  });
}

/** The command holding a paused or stopped version back (not one a later resume or start undid). */
function heldBy(
  phase: string | null,
  last: { action: string; actor: string; at: Date; reason: string } | undefined,
): TPipelineAlertSignals["heldBy"] {
  if (!last || (phase !== "paused" && phase !== "stopped")) return null;
  if (last.action !== "pause" && last.action !== "stop") return null;
  return {
    action: last.action,
    actor: last.actor.replace(/^(user|cli):/, ""),
    at: last.at,
    reason: last.reason,
  };
}

export async function findPipelineAlertSignals(
  db: PrismaClient,
  now = new Date(),
): Promise<TPipelineAlertSignals[]> {
  const pipelines = await db.pipeline.findMany({
    select: {
      id: true,
      name: true,
      ownerTeamId: true,
      servingVersion: {
        select: {
          id: true,
          version: true,
          spec: true,
          run: {
            select: {
              status: true,
              desiredState: true,
              lastError: true,
              consecutiveFailures: true,
              batchStartedAt: true,
              nextBatchAt: true,
            },
          },
        },
      },
    },
  });
  const ids = pipelines.flatMap((p) => (p.servingVersion ? [p.servingVersion.id] : []));
  const recent = bucketRange(
    { from: new Date(now.getTime() - RECENT_MS), to: now },
    RECENT_MS / 1000 / GRAIN_SECONDS,
  );
  const stateRange = bucketRange({ from: new Date(now.getTime() - STATE_WINDOW_MS), to: now }, 30);
  const windowFrom = new Date(now.getTime() - WINDOW_MS);
  const windowRange = bucketRange({ from: windowFrom, to: now }, WINDOW_MS / 1000 / GRAIN_SECONDS);
  const [
    outputWindow,
    outputState,
    offsets,
    windowTotals,
    processed,
    newest,
    stateBuckets,
    stateOffsets,
    webhookFailures,
    stateSince,
    holds,
    faults,
  ] = await Promise.all([
    queryOutputBuckets(db, ids, windowRange),
    queryOutputBuckets(db, ids, stateRange),
    queryOffsetBuckets(db, ids, recent),
    queryRangeTotals(db, ids, windowFrom, now),
    queryRangeTotals(db, ids, new Date(now.getTime() - PROCESSING_MS), now),
    queryNewestIngest(db, ids),
    queryBatchBuckets(db, ids, stateRange),
    queryOffsetBuckets(db, ids, stateRange),
    db.webhookDelivery.groupBy({
      by: ["pipelineId"],
      where: { status: "failed", lastAttemptAt: { gte: windowFrom } },
      _count: { _all: true },
    }),
    findStateSince(
      db,
      pipelines.map((p) => p.id),
    ),
    // The newest pause or stop command of each version: who held it back, when and why.
    rowsOf(
      db,
      tables
        .selectFrom("pipeline_run_transitions")
        .distinctOn("pipeline_version_id")
        .select(["pipeline_version_id as pv", "action", "actor", "created_at as at", "reason"])
        .where("pipeline_version_id", "=", sql<string>`ANY(${ids}::text[])`)
        .where("action", "in", ["pause", "stop", "resume", "start", "restart"])
        .orderBy("pipeline_version_id")
        .orderBy("created_at", "desc")
        .orderBy("id", "desc"),
    ),
    findFaultObservations(
      db,
      pipelines.map((p) => p.id),
    ),
  ]);
  const of = <T extends { pv: string }>(rows: T[], pv: string) => rows.filter((r) => r.pv === pv);

  return pipelines.map((p): TPipelineAlertSignals => {
    const v = p.servingVersion;
    const targets = targetsOf(v?.spec);
    const phase = v?.run ? runPhase(v.run.status, v.run.desiredState) : null;
    const totals = v ? of(windowTotals, v.id)[0] : undefined;
    const fresh = v ? of(newest, v.id)[0] : undefined;
    const points = v ? offsetPoints(of(offsets, v.id).map(sampleOf)).filter((x) => x.t >= recent.from) : [];
    return {
      pipelineId: p.id,
      pipeline: p.name,
      version: v?.version ?? null,
      ownerTeamId: p.ownerTeamId,
      phase,
      lastError: v?.run?.lastError ?? null,
      heldBy: heldBy(
        phase,
        holds.find((h) => h.pv === v?.id),
      ),
      consecutiveFailures: v?.run?.consecutiveFailures ?? 0,
      triggerMs: v ? triggerMsOf(v.spec) : null,
      waitingSince: phase === "running" ? (v?.run?.batchStartedAt ?? v?.run?.nextBatchAt ?? null) : null,
      recent: points.map((x) => ({ t: x.t, backlog: x.backlog, inputRate: x.inputRate })),
      processingRate: (v ? (of(processed, v.id)[0]?.input_rows ?? 0) : 0) / (PROCESSING_MS / 1000),
      ingestAgeMs: fresh ? Math.max(0, now.getTime() - fresh.ingest_time_max.getTime()) : null,
      freshnessTargetMs: targets.freshnessMs,
      violationTarget: targets.violationRate,
      window: {
        inputRows: totals?.input_rows ?? 0,
        violations: Object.values(totals?.violations ?? {}).reduce((a, b) => a + Number(b), 0),
        quarantinedOrDead: (totals?.quarantined ?? 0) + (totals?.dead_letter ?? 0),
        late: totals?.late ?? 0,
      },
      outputs: v
        ? outputSignals(
            declaredOutputs(v.spec),
            of(outputWindow, v.id),
            windowFrom,
            totals?.violations ?? {},
            of(outputState, v.id),
          )
        : [],
      stateRows: v ? of(stateBuckets, v.id).map((b) => ({ t: b.t, rows: b.state_rows })) : [],
      stateHorizon: v ? stateHorizonOf(v.spec) : null,
      stateSince: v ? (stateSince.get(v.id) ?? null) : null,
      stateWindowInputRates: v
        ? offsetPoints(of(stateOffsets, v.id).map(sampleOf))
            .filter((x) => x.t >= stateRange.from)
            .map((x) => x.inputRate)
        : [],
      webhookFailures: webhookFailures.find((w) => w.pipelineId === p.id)?._count._all ?? 0,
      producerFaults: faultsOf(faults.filter((f) => f.pipelineId === p.id)),
    };
  });
}

export async function findFleetAlertSignals(db: PrismaClient, now = new Date()): Promise<TFleetAlertSignals> {
  const [workers, runningPipelines] = await Promise.all([
    db.worker.findMany({
      where: { lastHeartbeatAt: { gte: new Date(now.getTime() - 24 * 3600_000) } },
      select: { id: true, host: true, lastHeartbeatAt: true, stoppedAt: true },
    }),
    db.pipelineRun.count({
      where: {
        desiredState: "running",
        status: { not: "failed" },
        pipelineVersion: { supersededById: null },
      },
    }),
  ]);
  return { workers, runningPipelines };
}
