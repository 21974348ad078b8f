// `sluice status <pipeline>`: what a person debugging a pipeline asks first.
import type pg from "pg";
import { createPrismaClient } from "@sluice/db";
import { findCheckpoint } from "@sluice/engine";
import {
  DEAD_LETTER_OUTCOMES,
  getPipelineRun,
  summarizeDeadLetters,
  type TPipelineRunView,
} from "@sluice/services";
import { connect } from "../connect";

export async function statusCommand(name: string): Promise<number> {
  const { pool, close } = await connect();
  try {
    const versions = await pool.query<{ id: string; version: number }>(
      `SELECT v.id, v.version FROM pipelines p JOIN pipeline_versions v ON v.pipeline_id = p.id
        WHERE p.name = $1 ORDER BY v.version DESC`,
      [name],
    );
    const newest = versions.rows[0];
    if (!newest) {
      console.error(`no pipeline named "${name}" — register one with: npx sluice run <spec.yaml>`);
      return 1;
    }
    for (const v of versions.rows) {
      const cp = await findCheckpoint(pool, v.id);
      // A version read in partition groups: each group holds its own lease (group_checkpoints).
      const groups = await pool.query<{ group_no: number; lease_owner: string | null; lease_epoch: string }>(
        `SELECT group_no, lease_owner, lease_epoch FROM group_checkpoints WHERE pipeline_version_id = $1 ORDER BY group_no`,
        [v.id],
      );
      const lease =
        groups.rowCount && groups.rowCount > 0
          ? `partition groups' leases ${groups.rows.map((g) => `g${g.group_no} ${g.lease_owner ?? "-"} (epoch ${g.lease_epoch})`).join(", ")}`
          : `lease ${cp?.leaseOwner ?? "-"} (epoch ${cp?.leaseEpoch ?? 0})`;
      console.log(
        `version ${v.version} [${v.id}]: last batch ${cp?.lastBatchId ?? "-"}, offsets ${JSON.stringify(cp?.endOffsets ?? {})}, ` +
          `watermark ${cp?.watermark?.toISOString() ?? "-"}, state ${cp?.stateRows ?? 0} rows / ${cp?.stateBytes ?? 0} bytes, ${lease}`,
      );
    }
    const latest = newest.id;
    const run = await pool.query(
      `SELECT status, desired_state, consecutive_failures, last_error, failed_batch_id, batch_worker_id, next_batch_at, attempt_batch_id, unfinished_attempts FROM pipeline_runs WHERE pipeline_version_id = $1`,
      [latest],
    );
    const r = run.rows[0];
    // A version read in partition groups: its run turn's own row is not where its batches are (the
    // console's run state, services getPipelineRun, has each group's turn).
    const groupTurns = r?.status === "running" ? await runningGroupTurns(pool, latest) : [];
    const nextBatchAt: Date | null = groupTurns.length > 0 ? null : r?.next_batch_at;
    console.log(
      r
        ? `run (table pipeline_runs): ${r.status}${r.desired_state !== r.status && r.status === "running" ? ` (${r.desired_state === "paused" ? "pausing" : "stopping"} after the batch in flight)` : ""}` +
            `${r.batch_worker_id ? `, batch in flight on ${r.batch_worker_id}` : ""}${nextBatchAt ? `, next batch ${nextBatchAt.toISOString()}` : ""}` +
            // More than the attempt in flight: workers died running this batch (docs/workers.md, poison batches).
            `${r.status === "running" && r.unfinished_attempts > 1 ? `, batch ${r.attempt_batch_id} started ${r.unfinished_attempts} times without finishing (workers died running it?)` : ""}` +
            `${r.status === "failed" ? `, failed at batch ${r.failed_batch_id}: ${r.last_error}` : r.consecutive_failures > 0 ? `, ${r.consecutive_failures} failed attempt(s), last: ${r.last_error}` : ""}`
        : "run: not started on the workers (npx sluice start <pipeline>)",
    );
    for (const g of groupTurns)
      console.log(
        `  partition group ${g.no} of ${groupTurns.length}: ` +
          (g.inFlight
            ? `batch in flight on ${g.inFlight.workerId} since ${g.inFlight.startedAt.toISOString()}`
            : g.drained
              ? "drained (availableNow)"
              : g.nextBatchAt
                ? `next batch ${g.nextBatchAt.toISOString()}`
                : "idle") +
          (g.consecutiveFailures > 0 ? `, ${g.consecutiveFailures} failed attempt(s)` : ""),
      );
    const batches = await pool.query(
      `SELECT batch_id, committed_at, input_rows, outcomes, progress->'durationMs'->>'total' AS ms, progress->>'backlog' AS backlog,
              progress->'group' AS group
         FROM batch_log WHERE pipeline_version_id = $1 ORDER BY batch_id DESC LIMIT 5`,
      [latest],
    );
    console.log(batches.rowCount ? "recent batches (table batch_log):" : "no committed batches yet");
    for (const b of batches.rows) {
      console.log(
        `  batch ${b.batch_id}${b.group ? ` (group ${b.group.no} of ${b.group.of}, backlog of its partitions)` : ""} at ${b.committed_at.toISOString()}: ${b.input_rows} rows in ${b.ms} ms, backlog ${b.backlog}, outcomes ${JSON.stringify(b.outcomes)}`,
      );
    }
    const failure = await pool.query(
      `SELECT batch_id, message, samples, created_at FROM batch_failures WHERE pipeline_version_id = $1 ORDER BY id DESC LIMIT 1`,
      [latest],
    );
    const f = failure.rows[0];
    if (f)
      console.log(
        `last failure (table batch_failures): batch ${f.batch_id} at ${f.created_at.toISOString()}: ${f.message}; sample ${JSON.stringify(f.samples[0] ?? null)}`,
      );
    // The same summary as the console's pipeline page: counts, and the reasons a person acts on.
    const db = createPrismaClient(pool);
    try {
      const dl = await summarizeDeadLetters(db, { pipeline: name, reasons: 5, rows: 1 });
      if (dl && dl.counts.total > 0) {
        console.log(
          `dead letters (table dead_letters): ${DEAD_LETTER_OUTCOMES.filter((o) => dl.counts[o] > 0)
            .map((o) => `${o} ${dl.counts[o]}`)
            .join(", ")}`,
        );
        for (const g of dl.reasons)
          console.log(`  ${String(g.count).padStart(6)} × ${g.outcome}: ${g.reason}`);
        if (dl.reasonGroups > dl.reasons.length)
          console.log(
            `  … and ${dl.reasonGroups - dl.reasons.length} more reason(s): see the console's page for this pipeline`,
          );
      }
    } finally {
      await db.$disconnect();
    }
    return 0;
  } finally {
    await close();
  }
}

/** Each partition group's turn of the version's current run (none for a version without groups). */
async function runningGroupTurns(
  pool: pg.Pool,
  pipelineVersionId: string,
): Promise<TPipelineRunView["groups"]> {
  const db = createPrismaClient(pool);
  try {
    return (await getPipelineRun(db, pipelineVersionId, { transitions: 0 }))?.groups ?? [];
  } finally {
    await db.$disconnect();
  }
}
