// The webhook delivery ledger (webhook_deliveries): one row per (pipeline, idempotency key), pending →
// delivered | failed, with attempts and the last error. Every write here is its own transaction,
// *outside* the batch transaction, so a recorded success survives a batch that rolls back or a worker
// that dies before committing: the batch re-runs, finds the key delivered, and does not send it again.
// Every write is fenced on the runner's lease epoch, so a runner that was taken over stops sending — a
// partition group's runner on its group's lease (and the version epoch a reset or schema change bumps).
//
// Partition groups share the ledger: a key is one row whichever group met it. Two groups meeting the
// same key at once (the same event on partitions of two groups) may both send it while it is pending —
// with the same idempotency key, as after a crash between a request and its recorded success — and the
// first success recorded makes it delivered for both. A group never counts a key delivered that is not:
// one another group gave up on is failed in its batch too, so whichever batch commits the row has it
// as a dead letter.
import type pg from "pg";
import { FencedError } from "../errors";
import { bulkSelect } from "../store/bulk";

export type DeliveryStatus = "pending" | "delivered" | "failed";

export interface LedgerEntry {
  key: string;
  status: DeliveryStatus;
  attempts: number;
  lastError: string | null;
}

export interface LedgerScope {
  pipelineId: string;
  pipelineVersionId: string;
  epoch: number;
  /** A partition group's runner: `epoch` is its group's lease. */
  group?: number;
}

/** SQL: the scope's lease still holds (`version`, `epoch`: the placeholders of the version and the epoch). */
function fence(s: LedgerScope, version = "$2", epoch = "$3"): string {
  if (s.group === undefined)
    return `EXISTS (SELECT 1 FROM checkpoints WHERE pipeline_version_id = ${version} AND lease_epoch = ${epoch})`;
  const group = Number(s.group); // a number, never text from a spec
  return `EXISTS (SELECT 1 FROM group_checkpoints g JOIN checkpoints c ON c.pipeline_version_id = g.pipeline_version_id AND c.lease_epoch = g.version_epoch
                   WHERE g.pipeline_version_id = ${version} AND g.group_no = ${group} AND g.lease_epoch = ${epoch})`;
}

async function assertLease(db: pg.Pool, s: LedgerScope): Promise<void> {
  const res = await db.query<{ held: boolean }>(`SELECT ${fence(s, "$1", "$2")} AS held`, [
    s.pipelineVersionId,
    s.epoch,
  ]);
  if (!res.rows[0]?.held)
    throw new FencedError(
      `pipeline version ${s.pipelineVersionId}${s.group === undefined ? "" : ` group ${s.group}`}: another runner took over; this one stops sending webhooks`,
    );
}

/** Records each key as pending unless the ledger knows it already; returns every key's entry. */
export async function claimDeliveries(
  db: pg.Pool,
  s: LedgerScope,
  batchId: number,
  deliveries: { key: string; payload: unknown }[],
): Promise<Map<string, LedgerEntry>> {
  if (deliveries.length === 0) return new Map();
  const { sql, params } = bulkSelect(
    [
      { name: "key", sqlType: "text", values: deliveries.map((d) => d.key) },
      { name: "payload", sqlType: "jsonb", values: deliveries.map((d) => d.payload) },
    ],
    5,
  );
  await db.query(
    `INSERT INTO webhook_deliveries (pipeline_id, idempotency_key, payload, pipeline_version_id, batch_id)
     SELECT $1, u.key, u.payload, $2, $4 FROM (${sql}) AS u (key, payload) WHERE ${fence(s)}
     ON CONFLICT (pipeline_id, idempotency_key) DO NOTHING`,
    [s.pipelineId, s.pipelineVersionId, s.epoch, batchId, ...params],
  );
  await assertLease(db, s);
  const res = await db.query<{
    idempotency_key: string;
    status: DeliveryStatus;
    attempts: number;
    last_error: string | null;
  }>(
    `SELECT idempotency_key, status, attempts, last_error FROM webhook_deliveries WHERE pipeline_id = $1 AND idempotency_key = ANY($2::text[])`,
    [s.pipelineId, deliveries.map((d) => d.key)],
  );
  return new Map(
    res.rows.map((r) => [
      r.idempotency_key,
      { key: r.idempotency_key, status: r.status, attempts: r.attempts, lastError: r.last_error },
    ]),
  );
}

/**
 * Counts an attempt *before* the request goes out. Returns the attempt number, or the key's entry when
 * it is no longer pending — delivered or given up meanwhile (by another partition group's batch that
 * met the same key): then it must not be sent.
 */
export async function beginAttempt(
  db: pg.Pool,
  s: LedgerScope,
  key: string,
): Promise<{ attempt: number } | { settled: LedgerEntry }> {
  const res = await db.query<{ attempts: number }>(
    `UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = now()
      WHERE pipeline_id = $1 AND idempotency_key = $4 AND status = 'pending' AND ${fence(s)}
      RETURNING attempts`,
    [s.pipelineId, s.pipelineVersionId, s.epoch, key],
  );
  if (res.rows[0]) return { attempt: res.rows[0].attempts };
  await assertLease(db, s);
  const settled = await db.query<{ status: DeliveryStatus; attempts: number; last_error: string | null }>(
    `SELECT status, attempts, last_error FROM webhook_deliveries WHERE pipeline_id = $1 AND idempotency_key = $2`,
    [s.pipelineId, key],
  );
  const r = settled.rows[0];
  return {
    settled: r
      ? { key, status: r.status, attempts: r.attempts, lastError: r.last_error }
      : {
          key,
          status: "failed",
          attempts: 0,
          lastError: "its delivery record was removed while it was being sent",
        },
  };
}

/** The success is recorded at once (its own transaction); an earlier attempt's error stays visible. */
export async function recordDelivered(
  db: pg.Pool,
  s: LedgerScope,
  key: string,
  statusCode: number,
): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET status = 'delivered', delivered_at = now(), last_status_code = $3
      WHERE pipeline_id = $1 AND idempotency_key = $2 AND status = 'pending'`,
    [s.pipelineId, key, statusCode],
  );
}

/** A failed attempt: the error is kept; with `final`, the delivery is given up (status failed). */
export async function recordAttemptFailed(
  db: pg.Pool,
  s: LedgerScope,
  key: string,
  failure: { statusCode: number | null; error: string; response: string; final: boolean },
): Promise<void> {
  // The receiver's answer is kept apart from the error: only the pipeline's owners and operators see it.
  await db.query(
    `UPDATE webhook_deliveries SET last_status_code = $3, last_error = $4, status = CASE WHEN $5 THEN 'failed' ELSE status END, last_response = $6
      WHERE pipeline_id = $1 AND idempotency_key = $2 AND status = 'pending'`,
    [
      s.pipelineId,
      key,
      failure.statusCode,
      failure.error.slice(0, 1000),
      failure.final,
      failure.response.slice(0, 1000) || null,
    ],
  );
}

/**
 * Deliveries an operator re-queued (failed → pending, see webhook_requeues) that are still pending,
 * oldest re-queue first, with the payload recorded when the key was first claimed.
 */
export async function findRequeued(
  db: pg.Pool,
  pipelineId: string,
  limit: number,
): Promise<{ key: string; payload: Record<string, unknown> }[]> {
  const res = await db.query<{ idempotency_key: string; payload: Record<string, unknown> }>(
    `SELECT idempotency_key, payload FROM webhook_deliveries
      WHERE pipeline_id = $1 AND status = 'pending' AND requeued_at IS NOT NULL
      ORDER BY requeued_at, idempotency_key LIMIT $2`,
    [pipelineId, limit],
  );
  return res.rows.map((r) => ({ key: r.idempotency_key, payload: r.payload }));
}

export async function findPipelineId(db: pg.Pool, pipelineVersionId: string): Promise<string | undefined> {
  const res = await db.query<{ pipeline_id: string }>(
    `SELECT pipeline_id FROM pipeline_versions WHERE id = $1`,
    [pipelineVersionId],
  );
  return res.rows[0]?.pipeline_id;
}
