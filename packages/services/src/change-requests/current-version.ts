// Which versions of a pipeline a change request may still be applied to. A request is made against
// one version (its impact — offsets, state, schema — is that version's); it holds while that version
// is current: the serving one, or the candidate (green) of a running rollout (its promotion request).
// A serving version stays current while a candidate is registered beside it — the candidate is the
// newest version but has not replaced it. Once a version stops being current (superseded by a new
// version, promoted away, rolled back, aborted, retired), its pending requests are stale. And no
// schema change is applied beside a running rollout.
import type { Prisma } from "@sluice/db";
import { ChangeRequestError } from "./change-request-view";

/** The version that makes `pipelineVersionId` not current — the serving one — or null when it is current. */
export async function staleAgainst(
  tx: Prisma.TransactionClient,
  pipelineId: string,
  pipelineVersionId: string,
): Promise<{ version: number | null } | null> {
  const [row] = await tx.$queryRaw<{ current: boolean; serving: number | null }[]>`
    SELECT (p.serving_version_id = ${pipelineVersionId}
            OR EXISTS (SELECT 1 FROM rollouts r WHERE r.pipeline_id = p.id AND r.state = 'running'
                                                  AND r.green_version_id = ${pipelineVersionId})) AS current,
           s.version AS serving
      FROM pipelines p LEFT JOIN pipeline_versions s ON s.id = p.serving_version_id
     WHERE p.id = ${pipelineId}`;
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
  const rows = await tx.$queryRaw<{ id: bigint }[]>`
    UPDATE change_requests SET status = 'stale', updated_at = now(), decision_note = ${note}
     WHERE pipeline_version_id = ${pipelineVersionId} AND status = 'pending' RETURNING id`;
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
  const [rollout] = await tx.$queryRaw<{ id: bigint }[]>`
    SELECT id FROM rollouts WHERE pipeline_id = ${pipelineId} AND state = 'running'`;
  if (rollout)
    throw new ChangeRequestError(
      `${pipeline} has rollout #${rollout.id} running: a schema change would register a third version beside blue and green. Promote or abort the rollout first, then approve this request.`,
      "conflict",
    );
}
