// Applying an approved promotion, inside the approval's transaction (decide-change-request.ts): blue's
// run stops and its runners are fenced (not superseded: a rollback resumes it from its own checkpoint),
// the serving views move to green's physical tables and pipelines.serving_version_id to green
// (@sluice/engine switchServing), the rollout is marked promoted — all in ONE transaction, so the
// promotion happens once or not at all, and a reader of a serving name sees blue's rows or green's,
// never none or both. Blue's tables and state are kept (for the rollout's keepPreviousHours); its
// pending change requests become stale.
import { countOf, firstRowOf, sql, tables, type Prisma } from "@sluice/db";
import { ConfigurationError, switchServing } from "@sluice/engine";
import { recordAuditEvent, type TAuditWho } from "../audit/record-audit-event";
import { ApplyRefusedError } from "../change-requests/apply-schema-change";
import { staleRequestsOf } from "../change-requests/current-version";
import { prismaSqlClient } from "../change-requests/prisma-sql-client";
import { setRun } from "./rollout-runs";
import { rolloutsWithVersions } from "./find-rollout";

export interface TAppliedPromotion {
  rolloutId: string;
  blue: number;
  green: number;
}

export async function applyPromotion(
  tx: Prisma.TransactionClient,
  cr: { id: bigint; pipelineVersionId: string; payload: unknown; requestedBy: string },
  who: TAuditWho,
  note: string,
): Promise<TAppliedPromotion> {
  const rolloutId = BigInt((cr.payload as { rolloutId?: string }).rolloutId ?? "0");
  const rollout = await firstRowOf(
    tx,
    rolloutsWithVersions()
      .select([
        "r.id",
        "p.name as pipeline",
        "p.id as pipeline_id",
        "r.state",
        "r.blue_version_id as blue",
        "b.version as blue_version",
        "r.green_version_id as green",
        "g.version as green_version",
      ])
      .where("r.id", "=", rolloutId)
      .forUpdate("r"),
  );
  if (!rollout) throw new ApplyRefusedError(`rollout #${rolloutId} does not exist`);
  if (rollout.state !== "running")
    throw new ApplyRefusedError(
      `rollout #${rollout.id} is ${rollout.state}, not running: nothing to promote`,
    );
  if (rollout.green !== cr.pipelineVersionId)
    throw new ApplyRefusedError(`the request is for another version than rollout #${rollout.id}'s candidate`);
  const why = `rollout #${rollout.id} promoted version ${rollout.green_version} (change request #${cr.id}, requested by ${cr.requestedBy}, approved by ${who.actor})`;
  await setRun(tx, rollout.blue, "stopped", "promoted_away", who.actor, why);
  const staleRequests = await staleRequestsOf(
    tx,
    rollout.blue,
    `version ${rollout.blue_version} stopped serving: rollout #${rollout.id} promoted version ${rollout.green_version}`,
  );
  await countOf(
    tx,
    tables
      .updateTable("rollouts")
      .set({
        state: "promoted",
        decided_by: who.actor,
        decided_at: sql`now()`,
        decision_reason: note,
        updated_at: sql`now()`,
      })
      .where("id", "=", rollout.id)
      .where("state", "=", "running"),
  );
  await recordAuditEvent(tx, {
    ...who,
    action: "rollout.promote",
    target: { type: "pipeline", id: rollout.pipeline_id, label: rollout.pipeline },
    reason: why.slice(0, 2000),
    before: { serving: rollout.blue_version },
    after: {
      serving: rollout.green_version,
      rollout: String(rollout.id),
      changeRequest: String(cr.id),
      staleRequests,
    },
  });
  // Last: the views' exclusive lock, which readers of the serving names wait on, is held from here to
  // the commit, so nothing else of the transaction runs after it (docs/performance.md, the switch).
  try {
    await switchServing(prismaSqlClient(tx), { from: rollout.blue, to: rollout.green, why: "promoted_away" });
  } catch (err) {
    if (err instanceof ConfigurationError) throw new ApplyRefusedError(err.message);
    throw err;
  }
  return { rolloutId: String(rollout.id), blue: rollout.blue_version, green: rollout.green_version };
}
