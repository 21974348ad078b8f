// The evaluator's lease, fenced like batches are: whoever holds `alert_evaluators.<id>` evaluates.
// Taking it from another owner (whose lease expired — it died, or lost Redis and stopped getting
// jobs) bumps the epoch, and every evaluation commits only while its epoch is still current, so a
// slow evaluator that lost the lease mid-tick cannot write after its successor.
import { countOf, firstRowOf, sql, tables, type Prisma, type PrismaClient } from "@sluice/db";

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
  const leaseUntil = sql<Date>`now() + ${leaseMs}::int * interval '1 millisecond'`;
  const row = await firstRowOf(
    db,
    tables
      .insertInto("alert_evaluators")
      .values({ id, owner, epoch: 1n, lease_until: leaseUntil })
      .onConflict((oc) =>
        oc
          .column("id")
          .doUpdateSet({
            epoch: sql`CASE WHEN alert_evaluators.owner = ${owner} THEN alert_evaluators.epoch ELSE alert_evaluators.epoch + 1 END`,
            owner,
            lease_until: leaseUntil,
          })
          .where(({ eb, or, lit }) =>
            or([
              lit(takeover),
              eb("alert_evaluators.owner", "=", owner),
              eb("alert_evaluators.owner", "is", null),
              eb("alert_evaluators.lease_until", "is", null),
              eb("alert_evaluators.lease_until", "<", sql<Date>`now()`),
            ]),
          ),
      )
      .returning("epoch"),
  );
  return row?.epoch ?? null;
}

/** Inside the evaluation's transaction: lock the lease row and check the epoch is still ours. */
export async function assertAlertLease(
  tx: Prisma.TransactionClient,
  id: TEvaluatorId,
  owner: string,
  epoch: bigint,
): Promise<void> {
  const row = await firstRowOf(
    tx,
    tables.selectFrom("alert_evaluators").select(["epoch", "owner"]).where("id", "=", id).forUpdate(),
  );
  if (row?.epoch !== epoch || row?.owner !== owner) throw new AlertEvaluatorFencedError(id, epoch);
  await countOf(
    tx,
    tables
      .updateTable("alert_evaluators")
      .set({ last_tick_at: sql`now()` })
      .where("id", "=", id),
  );
}

/** On a clean shutdown: let another evaluator take over at once instead of after the lease expires. */
export async function releaseAlertLease(db: PrismaClient, id: TEvaluatorId, owner: string): Promise<void> {
  await countOf(
    db,
    tables
      .updateTable("alert_evaluators")
      .set({ lease_until: null })
      .where("id", "=", id)
      .where("owner", "=", owner),
  );
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
