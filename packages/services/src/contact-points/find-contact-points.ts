// A team's contact points as the Admin page shows them: the target without its secret, and each one's
// delivery health — the last delivery, the last error and when, what is still retrying — with its
// recent history (alerts and tests), newest first.
import type { PrismaClient } from "@sluice/db";
import { describeSecret, type TContactPointKind } from "./contact-point-kinds";

export interface TContactPointDelivery {
  id: string;
  alertId: string | null;
  kind: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  lastAttemptAt: Date | null;
  deliveredAt: Date | null;
  nextAttemptAt: Date;
}

export interface TContactPointView {
  id: string;
  teamId: string;
  name: string;
  kind: TContactPointKind;
  target: string | null;
  endpoint: string | null;
  addresses: string[];
  enabled: boolean;
  createdBy: string;
  lastDeliveredAt: Date | null;
  lastError: { at: Date | null; error: string } | null;
  retrying: number;
  history: TContactPointDelivery[];
}

const HISTORY = 10;

export async function findContactPoints(db: PrismaClient, teamIds?: string[]): Promise<TContactPointView[]> {
  const points = await db.contactPoint.findMany({
    where: teamIds ? { teamId: { in: teamIds } } : {},
    orderBy: [{ teamId: "asc" }, { createdAt: "asc" }],
    include: { notifications: { orderBy: { id: "desc" }, take: HISTORY } },
  });
  if (points.length === 0) return [];
  const ids = points.map((p) => p.id);
  const [delivered, failed, retrying] = await Promise.all([
    db.alertNotification.groupBy({
      by: ["contactPointId"],
      where: { contactPointId: { in: ids }, status: "delivered" },
      _max: { deliveredAt: true },
    }),
    db.alertNotification.findMany({
      where: { contactPointId: { in: ids }, lastError: { not: null } },
      orderBy: { id: "desc" },
      distinct: ["contactPointId"],
      select: { contactPointId: true, lastError: true, lastResponse: true, lastAttemptAt: true },
    }),
    db.alertNotification.groupBy({
      by: ["contactPointId"],
      where: { contactPointId: { in: ids }, status: "pending", attempts: { gt: 0 } },
      _count: { _all: true },
    }),
  ]);
  const lastOk = new Map(delivered.map((d) => [d.contactPointId, d._max.deliveredAt]));
  const lastBad = new Map(failed.map((f) => [f.contactPointId, f]));
  const stuck = new Map(retrying.map((r) => [r.contactPointId, r._count._all]));
  return points.map((p) => {
    const bad = lastBad.get(p.id);
    return {
      id: p.id,
      teamId: p.teamId,
      name: p.name,
      kind: p.kind as TContactPointKind,
      target: describeSecret(p),
      endpoint: p.endpoint,
      addresses: p.addresses,
      enabled: p.enabled,
      createdBy: p.createdBy,
      lastDeliveredAt: lastOk.get(p.id) ?? null,
      // The Admin page (admins only): with what the receiver answered.
      lastError: bad?.lastError
        ? {
            at: bad.lastAttemptAt,
            error: bad.lastResponse
              ? `${bad.lastError} — the receiver said: ${bad.lastResponse}`
              : bad.lastError,
          }
        : null,
      retrying: stuck.get(p.id) ?? 0,
      history: p.notifications.map((n) => ({
        id: String(n.id),
        alertId: n.episodeId === null ? null : String(n.episodeId),
        kind: n.kind,
        status: n.status,
        attempts: n.attempts,
        lastStatusCode: n.lastStatusCode,
        lastError: n.lastError,
        createdAt: n.createdAt,
        lastAttemptAt: n.lastAttemptAt,
        deliveredAt: n.deliveredAt,
        nextAttemptAt: n.nextAttemptAt,
      })),
    };
  });
}
