// The fleet's headline, from the same facts the rows show: a pipeline needs attention when anything in
// its row is red — failed, lagging, freshness over target with input waiting, a backlog not draining,
// violations over target — or it has a firing alert. "All healthy" only when no row has any of these;
// open alerts someone acknowledged are said too (not healthy, but being handled). Pure, for the browser.
import type { TFleetStatus } from "./fleet-status";

export interface THeadlineRow {
  name: string;
  status: TFleetStatus;
  backlog: number | null;
  backlogSeconds: number | null;
  freshness: { ingestAgeMs: number | null; targetMs: number };
  violationRate: number | null;
  violationTarget: number;
}

export interface THeadline {
  tone: "ok" | "warn" | "bad";
  text: string;
  /** The pipelines that need attention, by name. */
  attention: string[];
}

/** What is red in one row (the cells the fleet table colours). */
export function rowProblems(r: THeadlineRow, firing: number): string[] {
  const waiting = (r.backlog ?? 0) > 0;
  return [
    r.status === "failed" ? "failed" : null,
    r.status === "lagging" ? "lagging" : null,
    r.freshness.ingestAgeMs !== null && r.freshness.ingestAgeMs > r.freshness.targetMs && waiting
      ? "freshness over target"
      : null,
    waiting && r.backlogSeconds === null ? "backlog not draining" : null,
    r.violationRate !== null && r.violationRate > r.violationTarget ? "violations over target" : null,
    firing > 0 ? "firing alerts" : null,
  ].filter((p): p is string => p !== null);
}

export function fleetHeadline(
  rows: THeadlineRow[],
  alerts: { pipeline: string; firing: number; acknowledged: number }[],
): THeadline {
  const by = new Map(alerts.map((a) => [a.pipeline, a]));
  const counts = new Map<string, number>();
  const attention: string[] = [];
  for (const r of rows) {
    const problems = rowProblems(r, by.get(r.name)?.firing ?? 0);
    if (problems.length > 0) attention.push(r.name);
    for (const p of problems) counts.set(p, (counts.get(p) ?? 0) + 1);
  }
  const acknowledged = rows.reduce((n, r) => n + (by.get(r.name)?.acknowledged ?? 0), 0);
  const ack = acknowledged > 0 ? `${acknowledged} alert${acknowledged === 1 ? "" : "s"} acknowledged` : null;
  if (attention.length === 0)
    return ack
      ? { tone: "warn", text: `no new problems · ${ack}`, attention }
      : { tone: "ok", text: "all healthy", attention };
  const why = [...counts.entries()].map(([p, n]) => `${n} ${p}`).join(", ");
  return {
    tone: "bad",
    text: `${attention.length} need${attention.length === 1 ? "s" : ""} attention: ${why}${ack ? ` · ${ack}` : ""}`,
    attention,
  };
}
