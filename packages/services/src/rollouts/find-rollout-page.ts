// The rollout page's read: a pipeline's current rollout (the running one, else the newest) with each
// side's run and checkpoint, how far green has caught up, the newest reconciliation and the promotion
// request — and the phase both the page and the fleet show (rollout-phase.ts). Charts come from the
// per-version series the pipeline page uses (signals.series with the version).
import type { PrismaClient } from "@sluice/db";
import { findCheckpoint } from "@sluice/engine";
import type pg from "pg";
import { prismaSqlClient } from "../change-requests/prisma-sql-client";
import { findLatestReconciliations } from "./find-latest-reconciliation";
import { findRollout, type TRolloutView } from "./find-rollout";
import {
  rolloutPhase,
  rolloutProgress,
  summarizeReconciliations,
  type TRolloutPhase,
  type TRolloutProgress,
} from "./rollout-phase";
import type { TStoredReconciliation } from "./run-reconciliation";

export interface TRolloutSide {
  version: number;
  pipelineVersionId: string;
  /** Readers of the serving name see this side's tables. */
  serving: boolean;
  status: string;
  desiredState: string;
  lastError: string | null;
  /** Next offset to read per partition after its last committed batch. */
  committedOffsets: Record<string, number>;
  lastBatchId: number;
  lastCommitAt: Date | null;
  watermark: Date | null;
  stateRows: number;
  /** Serving name → this version's physical table (schema sluice_sinks). */
  tables: Record<string, string>;
}

export interface TRolloutPage {
  rollout: Omit<TRolloutView, "blue" | "green" | "startingFrom"> & {
    startingFrom: { kind: string; at?: string; offsets: Record<string, number>; warnings: string[] };
  };
  blue: TRolloutSide;
  green: TRolloutSide;
  progress: TRolloutProgress;
  phase: TRolloutPhase;
  label: string;
  /** The newest reconciliation of each output both write ("" for a spec's only sink), by output name. */
  reconciliations: TStoredReconciliation[];
  promotion: { id: bigint; status: string; requestedBy: string; createdAt: Date } | null;
}

async function sideOf(
  db: PrismaClient,
  v: { pipelineVersionId: string; version: number },
  servingVersionId: string | null,
): Promise<TRolloutSide> {
  const row = await db.pipelineVersion.findUniqueOrThrow({
    where: { id: v.pipelineVersionId },
    select: { sinkTables: true, run: { select: { status: true, desiredState: true, lastError: true } } },
  });
  // The engine's reader: its offsets come typed, not cast from Prisma's JSON.
  const cp = await findCheckpoint(prismaSqlClient(db), v.pipelineVersionId);
  return {
    ...v,
    serving: v.pipelineVersionId === servingVersionId,
    status: row.run?.status ?? "stopped",
    desiredState: row.run?.desiredState ?? "stopped",
    lastError: row.run?.lastError ?? null,
    committedOffsets: cp?.endOffsets ?? {},
    lastBatchId: cp?.lastBatchId ?? -1,
    lastCommitAt: cp && cp.lastBatchId >= 0 ? cp.updatedAt : null,
    watermark: cp?.watermark ?? null,
    stateRows: cp?.stateRows ?? 0,
    tables: row.sinkTables as Record<string, string>,
  };
}

/** null when the pipeline never had a rollout (or does not exist). */
export async function findRolloutPage(
  db: PrismaClient,
  pool: pg.Pool,
  pipeline: string,
): Promise<TRolloutPage | null> {
  const r = await findRollout(db, pipeline);
  if (!r) return null;
  const [blue, green, reconciliations, promotion] = await Promise.all([
    sideOf(db, r.blue, r.servingVersionId),
    sideOf(db, r.green, r.servingVersionId),
    findLatestReconciliations(pool, r.blue.pipelineVersionId, r.green.pipelineVersionId),
    r.promotionRequestId === null
      ? db.changeRequest.findFirst({
          where: { kind: "promotion", pipelineVersionId: r.green.pipelineVersionId },
          orderBy: { createdAt: "desc" },
          select: { id: true, status: true, requestedBy: true, createdAt: true },
        })
      : db.changeRequest.findUnique({
          where: { id: r.promotionRequestId },
          select: { id: true, status: true, requestedBy: true, createdAt: true },
        }),
  ]);
  const from = (r.startingFrom ?? {}) as TRolloutPage["rollout"]["startingFrom"];
  const startingFrom = { ...from, offsets: from.offsets ?? {}, warnings: from.warnings ?? [] };
  const progress = rolloutProgress(startingFrom.offsets, blue.committedOffsets, green.committedOffsets);
  const { phase, label } = rolloutPhase({
    state: r.state,
    greenVersion: green.version,
    greenStatus: green.status,
    progress,
    reconciliation: summarizeReconciliations(reconciliations),
    promotionRequestId:
      promotion && (promotion.status === "pending" || promotion.status === "approved")
        ? String(promotion.id)
        : null,
  });
  const { blue: _b, green: _g, startingFrom: _s, ...rest } = r;
  return {
    rollout: { ...rest, startingFrom },
    blue,
    green,
    progress,
    phase,
    label,
    reconciliations,
    promotion,
  };
}
