// Reconciling a pipeline's running rollout (the rollout page's "Reconcile now", and the workers every
// WORKER_ROLLOUT_RECONCILE_INTERVAL_MS): blue against green, each from its registered spec and its own
// physical tables, from where both started (reconciliation-from.ts), one stored row per output both
// write (rollout-outputs.ts). One reconciliation of a rollout at a time, across processes: a session
// advisory lock held on its own connection (released by Postgres if the process dies); a person waits
// for a running one and then gets a fresh one, the workers skip a rollout being reconciled.
import type { PrismaClient } from "@sluice/db";
import { validateSpec } from "@sluice/pipeline-spec";
import type pg from "pg";
import { findRollout, type TRolloutView } from "./find-rollout";
import { reconciliationFrom } from "./reconciliation-from";
import { RolloutError } from "./rollout-error";
import { rolloutOutputs, type TSkippedOutput, type TVersionSide } from "./rollout-outputs";
import {
  runReconciliation,
  storeReconciliation,
  type TReconciliationRequester,
  type TStoredReconciliation,
} from "./run-reconciliation";

export interface TRolloutReconciliation {
  rolloutId: string;
  pipeline: string;
  blue: { pipelineVersionId: string; version: number };
  green: { pipelineVersionId: string; version: number };
  /** One per output both versions write ("" for a spec's only sink), stored, in output order. */
  reconciliations: TStoredReconciliation[];
  /** Outputs with nothing to compare (a webhook, an output only one side has), with why. */
  skipped: TSkippedOutput[];
}

/** Reconciles the pipeline's running rollout now (waiting for one in progress) and returns what was stored. */
export async function reconcileRollout(
  pool: pg.Pool,
  db: PrismaClient,
  pipeline: string,
  who: TReconciliationRequester,
): Promise<TRolloutReconciliation> {
  const rollout = await findRollout(db, pipeline);
  if (rollout?.state !== "running")
    throw new RolloutError(
      `${pipeline} has no rollout running${rollout ? ` (rollout #${rollout.id} is ${rollout.state})` : ""}: there is nothing to reconcile — start one with sluice rollout start <spec>`,
      rollout ? "conflict" : "not_found",
    );
  return (await reconcileLocked(pool, rollout, who, "wait"))!;
}

/** The workers' pass: a rollout another process is reconciling is skipped (null). */
export async function reconcileRolloutIfIdle(
  pool: pg.Pool,
  rollout: TRolloutView,
  who: TReconciliationRequester,
): Promise<TRolloutReconciliation | null> {
  return reconcileLocked(pool, rollout, who, "skip");
}

async function reconcileLocked(
  pool: pg.Pool,
  rollout: TRolloutView,
  who: TReconciliationRequester,
  busy: "wait" | "skip",
): Promise<TRolloutReconciliation | null> {
  const lock = await pool.connect();
  const key = `sluice.rollout-reconcile.${rollout.id}`;
  let broken: Error | undefined;
  try {
    if (busy === "wait") await lock.query(`SELECT pg_advisory_lock(hashtext($1))`, [key]);
    else {
      const res = await lock.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtext($1)) AS ok`, [key]);
      if (!res.rows[0]?.ok) return null;
    }
    try {
      return await reconcileNow(pool, rollout, who);
    } finally {
      await lock
        .query(`SELECT pg_advisory_unlock(hashtext($1))`, [key])
        .catch((err: Error) => (broken = err));
    }
  } catch (err) {
    broken ??= err as Error;
    throw err;
  } finally {
    // A connection whose unlock failed may still hold the lock: destroy it rather than pool it.
    lock.release(broken);
  }
}

async function reconcileNow(
  pool: pg.Pool,
  rollout: TRolloutView,
  who: TReconciliationRequester,
): Promise<TRolloutReconciliation> {
  const versions = await pool.query<{ id: string; version: number; spec: unknown; sink_tables: unknown }>(
    `SELECT id, version, spec, sink_tables FROM pipeline_versions WHERE id = ANY($1::text[])`,
    [[rollout.blue.pipelineVersionId, rollout.green.pipelineVersionId]],
  );
  const side = (id: string): TVersionSide | string => {
    const row = versions.rows.find((v) => v.id === id)!;
    const checked = validateSpec(row.spec);
    if (!checked.ok)
      return `version ${row.version}'s spec no longer validates (${checked.errors.map((e) => `${e.path}: ${e.message}`).join("; ")}): its results cannot be read by its spec`;
    return {
      pipelineVersionId: id,
      spec: checked.spec,
      sinkTables: row.sink_tables as Record<string, string>,
    };
  };
  const blue = side(rollout.blue.pipelineVersionId);
  const green = side(rollout.green.pipelineVersionId);
  const result: TRolloutReconciliation = {
    rolloutId: String(rollout.id),
    pipeline: rollout.pipeline,
    blue: rollout.blue,
    green: rollout.green,
    reconciliations: [],
    skipped: [],
  };
  const ids = {
    blue: { pipelineVersionId: rollout.blue.pipelineVersionId },
    green: { pipelineVersionId: rollout.green.pipelineVersionId },
  };
  if (typeof blue === "string" || typeof green === "string") {
    const error = typeof blue === "string" ? blue : (green as string);
    result.reconciliations.push(
      await storeReconciliation(pool, ids, who, { startedAt: new Date(), report: null, error }),
    );
    return result;
  }
  const { pairs, skipped } = rolloutOutputs(blue, green);
  result.skipped = skipped;
  const from = await reconciliationFrom(pool, {
    blueVersionId: rollout.blue.pipelineVersionId,
    greenVersionId: rollout.green.pipelineVersionId,
    startingFrom: rollout.startingFrom,
  });
  for (const pair of pairs) {
    const startedAt = new Date();
    try {
      result.reconciliations.push(
        await runReconciliation(pool, { blue: pair.blue, green: pair.green, from }, who),
      );
    } catch (err) {
      // Not a refusal Postgres reported (those are stored by runReconciliation): still stored, so the
      // rollout page and the promotion rule see that this output's newest reconciliation failed.
      result.reconciliations.push(
        await storeReconciliation(pool, pair, who, {
          startedAt,
          report: null,
          error: `the reconciliation could not run: ${(err as Error).message}`,
        }),
      );
    }
  }
  return result;
}
