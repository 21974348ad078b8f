// Puts an alert's notifications in the outbox, inside the caller's transaction (the evaluation tick, or
// a person acknowledging / resolving): one row per contact point, each with a unique dedup key, so a
// re-run cannot queue a page twice. A fire or reminder goes to every enabled contact point of the
// recipient teams; an acknowledge or resolve goes to the contact points its fire went to (PagerDuty
// can only acknowledge or resolve an incident it was sent). A team with no contact point gets a row
// failed at once that says so — nobody paged is shown, never silent.
import type { Prisma } from "@sluice/db";
import type { TNotificationFacts, TNotificationKind } from "./notification-facts";

type TTx = Prisma.TransactionClient;

export interface TQueueRequest {
  episodeId: bigint;
  kind: Exclude<TNotificationKind, "test">;
  /** The reminder's number (dedup keys differ per reminder); 0 otherwise. */
  n?: number;
  /** fire / reminder: the teams to page. */
  teamIds: string[];
  /** The facts for one team (its name goes in the message). */
  facts: (teamName: string) => TNotificationFacts;
  now: Date;
}

export const NO_CONTACT_POINT = (team: string) =>
  `nobody paged: ${team} has no enabled contact point — an admin adds one on the Admin page (Teams → Contact points)`;

/** Queues the rows; answers with the note for the episode's history ("to Payments Data: …"). */
export async function queueNotifications(
  tx: TTx,
  req: TQueueRequest,
): Promise<{ queued: number; note: string }> {
  const suffix = req.n ? `:${req.n}` : "";
  const targets =
    req.kind === "fire" || req.kind === "reminder"
      ? await tx.contactPoint.findMany({
          where: { teamId: { in: req.teamIds }, enabled: true },
          select: { id: true, name: true, kind: true, teamId: true },
          orderBy: { createdAt: "asc" },
        })
      : (
          await tx.alertNotification.findMany({
            where: { episodeId: req.episodeId, kind: "fire", contactPointId: { not: null } },
            select: { contactPoint: { select: { id: true, name: true, kind: true, teamId: true } } },
          })
        ).flatMap((n) => (n.contactPoint ? [n.contactPoint] : []));
  const teamIds =
    req.kind === "fire" || req.kind === "reminder" ? req.teamIds : [...new Set(targets.map((t) => t.teamId))];
  if (teamIds.length === 0) return { queued: 0, note: "no team to notify" };
  const teams = new Map(
    (await tx.team.findMany({ where: { id: { in: teamIds } }, select: { id: true, name: true } })).map(
      (t) => [t.id, t.name],
    ),
  );
  const rows: Prisma.AlertNotificationCreateManyInput[] = [];
  const notes: string[] = [];
  for (const teamId of teamIds) {
    const team = teams.get(teamId) ?? teamId;
    const facts = req.facts(team) as unknown as Prisma.InputJsonValue;
    const mine = targets.filter((t) => t.teamId === teamId);
    if (mine.length === 0) {
      rows.push({
        episodeId: req.episodeId,
        teamId,
        kind: req.kind,
        dedupKey: `${req.episodeId}:team-${teamId}:${req.kind}${suffix}`,
        status: "failed",
        lastError: NO_CONTACT_POINT(team),
        payload: facts,
        nextAttemptAt: req.now,
      });
      notes.push(NO_CONTACT_POINT(team));
      continue;
    }
    for (const cp of mine)
      rows.push({
        episodeId: req.episodeId,
        teamId,
        contactPointId: cp.id,
        kind: req.kind,
        dedupKey: `${req.episodeId}:${cp.id}:${req.kind}${suffix}`,
        payload: facts,
        nextAttemptAt: req.now,
      });
    notes.push(`to ${team}: ${mine.map((c) => `${c.name} (${c.kind})`).join(", ")}`);
  }
  const queued = await tx.alertNotification.createMany({ data: rows, skipDuplicates: true });
  return { queued: queued.count, note: notes.join("; ") };
}
