// The evaluator's lease, fenced like batches are: whoever holds `alert_evaluators.<id>` evaluates.
// Taking it from another owner (whose lease expired — it died, or lost Redis and stopped getting
// jobs) bumps the epoch, and every evaluation commits only while its epoch is still current, so a
// slow evaluator that lost the lease mid-tick cannot write after its successor.
import type { Prisma, PrismaClient } from "@sluice/db";

export type TEvaluatorId = "workers" | "watchdog";

export class AlertEvaluatorFencedError extends Error {
  constructor(
    readonly evaluator: TEvaluatorId,
    readonly epoch: bigint,
  ) {
    super(`alert evaluator "${evaluator}" lease epoch ${epoch} was taken over; this tick is discarded`);
    this.name = "AlertEvaluatorFencedError";
  }
}

/**
 * Take or renew the lease; null when another owner holds an unexpired one. `takeover`: take it even
 * then ("latest evaluator wins", as batches do) — for the workers, where receiving the `alerts.evaluate`
 * job is the turn to evaluate, so the cadence does not depend on which worker BullMQ hands it to; the
 * epoch check then discards a previous holder's tick still in flight.
 */
export async function takeAlertLease(
  db: PrismaClient,
  id: TEvaluatorId,
  owner: string,
  leaseMs: number,
  takeover = false,
): Promise<bigint | null> {
  const rows = await db.$queryRaw<{ epoch: bigint }[]>`
    INSERT INTO alert_evaluators (id, owner, epoch, lease_until) VALUES (${id}, ${owner}, 1, now() + ${leaseMs}::int * interval '1 millisecond')
    ON CONFLICT (id) DO UPDATE
       SET epoch = CASE WHEN alert_evaluators.owner = ${owner} THEN alert_evaluators.epoch ELSE alert_evaluators.epoch + 1 END,
           owner = ${owner}, lease_until = now() + ${leaseMs}::int * interval '1 millisecond'
     WHERE ${takeover} OR alert_evaluators.owner = ${owner} OR alert_evaluators.owner IS NULL OR alert_evaluators.lease_until IS NULL OR alert_evaluators.lease_until < now()
    RETURNING epoch`;
  return rows[0]?.epoch ?? null;
}

/** Inside the evaluation's transaction: lock the lease row and check the epoch is still ours. */
export async function assertAlertLease(
  tx: Prisma.TransactionClient,
  id: TEvaluatorId,
  owner: string,
  epoch: bigint,
): Promise<void> {
  const rows = await tx.$queryRaw<
    { epoch: bigint; owner: string | null }[]
  >`SELECT epoch, owner FROM alert_evaluators WHERE id = ${id} FOR UPDATE`;
  if (rows[0]?.epoch !== epoch || rows[0]?.owner !== owner) throw new AlertEvaluatorFencedError(id, epoch);
  await tx.$executeRaw`UPDATE alert_evaluators SET last_tick_at = now() WHERE id = ${id}`;
}

/** On a clean shutdown: let another evaluator take over at once instead of after the lease expires. */
export async function releaseAlertLease(db: PrismaClient, id: TEvaluatorId, owner: string): Promise<void> {
  await db.$executeRaw`UPDATE alert_evaluators SET lease_until = NULL WHERE id = ${id} AND owner = ${owner}`;
}

export async function getAlertLease(
  db: PrismaClient,
  id: TEvaluatorId,
): Promise<{ owner: string | null; epoch: bigint; leaseUntil: Date | null; lastTickAt: Date | null } | null> {
  return db.alertEvaluator.findUnique({
    where: { id },
    select: { owner: true, epoch: true, leaseUntil: true, lastTickAt: true },
  });
}
