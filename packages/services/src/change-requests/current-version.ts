// Which versions of a pipeline a change request may still be applied to. A request is made against
// one version (its impact — offsets, state, schema — is that version's); it holds while that version
// is current: the serving one, or the candidate (green) of a running rollout (its promotion request).
// A serving version stays current while a candidate is registered beside it — the candidate is the
// newest version but has not replaced it. Once a version stops being current (superseded by a new
// version, promoted away, rolled back, aborted, retired), its pending requests are stale. And no
// schema change is applied beside a running rollout.
import { firstRowOf, rowsOf, sql, tables, type Prisma } from "@sluice/db";
import { ChangeRequestError } from "./change-request-view";

/** The version that makes `pipelineVersionId` not current — the serving one — or null when it is current. */
export async function staleAgainst(
  tx: Prisma.TransactionClient,
  pipelineId: string,
  pipelineVersionId: string,
): Promise<{ version: number | null } | null> {
  const row = await firstRowOf(
    tx,
    tables
      .selectFrom("pipelines as p")
      .leftJoin("pipeline_versions as s", "s.id", "p.serving_version_id")
      .select((eb) => [
        eb
          .or([
            eb("p.serving_version_id", "=", pipelineVersionId),
            eb.exists(
              eb
                .selectFrom("rollouts as r")
                .select(eb.lit(1).as("one"))
                .whereRef("r.pipeline_id", "=", "p.id")
                .where("r.state", "=", "running")
                .where("r.green_version_id", "=", pipelineVersionId),
            ),
          ])
          .as("current"),
        "s.version as serving",
      ])
      .where("p.id", "=", pipelineId),
  );
  return row?.current ? null : { version: row?.serving ?? null };
}

/**
 * Marks the pending requests against a version that just stopped being current stale, with `note`
 * (inside the transaction that stopped it). Returns their ids, for that transaction's audit event.
 */
export async function staleRequestsOf(
  tx: Prisma.TransactionClient,
  pipelineVersionId: string,
  note: string,
): Promise<string[]> {
  const rows = await rowsOf(
    tx,
    tables
      .updateTable("change_requests")
      .set({ status: "stale", updated_at: sql`now()`, decision_note: note })
      .where("pipeline_version_id", "=", pipelineVersionId)
      .where("status", "=", "pending")
      .returning("id"),
  );
  return rows.map((r) => String(r.id));
}

/**
 * A schema change registers a version continuing the current one in place: beside a running rollout
 * that would leave blue or green behind a third version. Refused (the request stays pending).
 */
export async function refuseBesideRollout(
  tx: Prisma.TransactionClient,
  pipelineId: string,
  pipeline: string,
): Promise<void> {
  const rollout = await firstRowOf(
    tx,
    tables
      .selectFrom("rollouts")
      .select("id")
      .where("pipeline_id", "=", pipelineId)
      .where("state", "=", "running"),
  );
  if (rollout)
    throw new ChangeRequestError(
      `${pipeline} has rollout #${rollout.id} running: a schema change would register a third version beside blue and green. Promote or abort the rollout first, then approve this request.`,
      "conflict",
    );
}
