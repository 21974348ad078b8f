// The fleet's headline, from the same facts the rows show: a pipeline needs attention when anything in
// its row is red — failed, lagging, freshness over target with input waiting, a backlog not draining,
// violations over target — or it has a firing alert. It counts firing alerts (the fleet's own, such as
// "no worker alive", too) and the rows by what is red in them. "All healthy" only when no row has any of
// these, nothing fires and the alerts could be read; open alerts someone acknowledged are said too (not
// healthy, but being handled). Pure, for the browser.
import type { TFleetStatus } from "./fleet-status";

export interface THeadlineRow {
  name: string;
  /** Another version than the serving one (its own fleet row): alerts are the serving version's, counted once. */
  serving?: boolean;
  version?: number | null;
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

/** What is red in one row (the cells the fleet table colours); firing alerts are counted apart. */
export function rowProblems(r: THeadlineRow, firing: number): string[] {
  const waiting = (r.backlog ?? 0) > 0;
  return [
    r.status === "failed" ? "failed" : null,
    r.status === "lagging" ? "lagging" : null,
    r.freshness.ingestAgeMs !== null && r.freshness.ingestAgeMs > r.freshness.targetMs && waiting
      ? "with freshness over target"
      : null,
    waiting && r.backlogSeconds === null ? "with backlog not draining" : null,
    r.violationRate !== null && r.violationRate > r.violationTarget ? "with violations over target" : null,
    firing > 0 ? "firing alerts" : null,
  ].filter((p): p is string => p !== null);
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * `alerts`: unresolved alerts per pipeline (`pipeline: null` for the fleet's own rules, such as "no
 * worker alive"). `alertsUnknown`: the alerts could not be read — then the headline never says healthy.
 */
export function fleetHeadline(
  rows: THeadlineRow[],
  alerts: { pipeline: string | null; firing: number; acknowledged: number }[],
  opts: { alertsUnknown?: boolean } = {},
): THeadline {
  const names = new Set(rows.map((r) => r.name));
  // The fleet's own alerts (pipeline null) count with the rows' alerts.
  const mine = alerts.filter((a) => a.pipeline === null || names.has(a.pipeline));
  const firingOf = (name: string) => alerts.find((a) => a.pipeline === name)?.firing ?? 0;
  const counts = new Map<string, number>();
  const attention: string[] = [];
  for (const r of rows) {
    const problems = rowProblems(r, r.serving === false ? 0 : firingOf(r.name));
    if (problems.length > 0) attention.push(r.serving === false ? `${r.name}@${r.version}` : r.name);
    for (const p of problems) if (p !== "firing alerts") counts.set(p, (counts.get(p) ?? 0) + 1);
  }
  const firing = mine.reduce((n, a) => n + a.firing, 0);
  const fleetFiring = mine.filter((a) => a.pipeline === null).reduce((n, a) => n + a.firing, 0);
  const acknowledged = mine.reduce((n, a) => n + a.acknowledged, 0);
  const tail = [
    acknowledged > 0 ? `${plural(acknowledged, "alert")} acknowledged` : null,
    opts.alertsUnknown ? "alerts unknown (could not load them)" : null,
  ].filter((x): x is string => x !== null);
  const after = tail.length > 0 ? ` · ${tail.join(" · ")}` : "";
  if (attention.length === 0 && firing === 0) {
    if (opts.alertsUnknown) return { tone: "warn", text: `no problem in the rows${after}`, attention };
    return acknowledged > 0
      ? { tone: "warn", text: `no new problems${after}`, attention }
      : { tone: "ok", text: "all healthy", attention };
  }
  const why = [
    firing > 0
      ? `${plural(firing, "firing alert")}${fleetFiring > 0 ? ` (${fleetFiring} fleet-wide)` : ""}`
      : null,
    ...[...counts.entries()].map(([p, n]) => `${n} ${p}`),
  ].filter((x): x is string => x !== null);
  const who =
    attention.length > 0
      ? `${plural(attention.length, "pipeline")} need${attention.length === 1 ? "s" : ""} attention: `
      : "";
  return { tone: "bad", text: `${who}${why.join(", ")}${after}`, attention };
}
