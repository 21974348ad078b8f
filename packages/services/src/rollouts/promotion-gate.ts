// The rule a promotion must pass, when it is requested and again when it is approved: for every output
// both versions write to Postgres, the NEWEST stored reconciliation of blue and green is `compared`
// with nothing only in blue, nothing only in green and nothing differing. A newer failed, waiting or
// not-comparable one counts — the workers reconcile every rollout periodically, so a bug that shows
// after the request was made stops the approval. Measures a roll-up cannot merge (avg, distinct counts
// across window sizes) are listed with the reconciliation and do not block: the 5- to 10-minute change
// compares clean on everything that can be compared. Why this rule: docs/rollouts.md, "Promotion".
import { firstRowOf, rowsOf, tables, type Prisma, type PrismaClient } from "@sluice/db";
import { validateSpec } from "@sluice/pipeline-spec";
import type { TReconciliationReport } from "./reconciliation-report";
import { rolloutOutputs, type TVersionSide } from "./rollout-outputs";
import { rolloutsWithVersions } from "./find-rollout";

// A type, not an interface: it is stored as JSON in the change request's impact.
export type TGateReconciliation = {
  output: string;
  id: string;
  status: string;
  onlyBlue: number | null;
  onlyGreen: number | null;
  differing: number | null;
  at: string;
  /** What was left out of the comparison (measures, columns), by name. */
  notCompared: string[];
};

export interface TPromotionGate {
  /** Why the promotion is refused, in words that say what to do; null when it may go ahead. */
  refusal: string | null;
  /** Refused only for differences completed comparisons found: a request accepting them would pass. */
  differencesOnly: boolean;
  reconciliations: TGateReconciliation[];
}

type TDb = PrismaClient | Prisma.TransactionClient;

export async function promotionGate(
  db: TDb,
  rollout: {
    pipeline: string;
    blue: { pipelineVersionId: string; version: number };
    green: { pipelineVersionId: string; version: number };
  },
  opts: { acceptDifferences?: boolean } = {},
): Promise<TPromotionGate> {
  const versions = await db.pipelineVersion.findMany({
    where: { id: { in: [rollout.blue.pipelineVersionId, rollout.green.pipelineVersionId] } },
    select: { id: true, spec: true, sinkTables: true },
  });
  const side = (id: string): TVersionSide | null => {
    const v = versions.find((x) => x.id === id);
    const checked = validateSpec(v?.spec);
    return v && checked.ok
      ? { pipelineVersionId: id, spec: checked.spec, sinkTables: v.sinkTables as Record<string, string> }
      : null;
  };
  const [blue, green] = [side(rollout.blue.pipelineVersionId), side(rollout.green.pipelineVersionId)];
  const versionsLabel = `version ${rollout.blue.version} (blue) and version ${rollout.green.version} (green)`;
  if (!blue || !green)
    return {
      refusal: `${rollout.pipeline}: the spec of ${!blue ? "blue" : "green"} no longer validates, so ${versionsLabel} cannot be reconciled: abort the rollout`,
      differencesOnly: false,
      reconciliations: [],
    };
  const { pairs, skipped } = rolloutOutputs(blue, green);
  if (pairs.length === 0)
    return {
      refusal: `${rollout.pipeline}: ${versionsLabel} write no result both have in Postgres, so nothing shows green is right (${skipped.map((s) => s.reason).join("; ")}); a rollout cannot be promoted without a clean reconciliation`,
      differencesOnly: false,
      reconciliations: [],
    };
  const rows = await rowsOf(
    db,
    tables
      .selectFrom("rollout_reconciliations")
      .distinctOn("output")
      .select([
        "id",
        "output",
        "status",
        "only_blue",
        "only_green",
        "differing",
        "report",
        "error",
        "finished_at",
      ])
      .where("blue_version_id", "=", rollout.blue.pipelineVersionId)
      .where("green_version_id", "=", rollout.green.pipelineVersionId)
      .orderBy("output")
      .orderBy("started_at", "desc")
      .orderBy("id", "desc")
      .$narrowType<{ report: TReconciliationReport | null }>(),
  );
  const problems: string[] = [];
  let differencesOnly = true;
  const reconciliations: TGateReconciliation[] = [];
  for (const { output } of pairs) {
    const label = output === "" ? "" : `output ${output}: `;
    const r = rows.find((x) => x.output === output);
    if (!r) {
      problems.push(`${label}no reconciliation has been run yet`);
      differencesOnly = false;
      continue;
    }
    const n = (v: bigint | null) => (v === null ? null : Number(v));
    reconciliations.push({
      output,
      id: String(r.id),
      status: r.status,
      onlyBlue: n(r.only_blue),
      onlyGreen: n(r.only_green),
      differing: n(r.differing),
      at: r.finished_at.toISOString(),
      notCompared: (r.report?.notComparable ?? []).map((x) => x.what),
    });
    const problem = whyNotClean(r.status, reconciliations.at(-1)!, r.report, r.error, opts.acceptDifferences);
    if (problem) {
      problems.push(`${label}reconciliation #${r.id} (${r.finished_at.toISOString()}) ${problem}`);
      if (r.status !== "compared") differencesOnly = false;
    }
  }
  if (problems.length === 0) return { refusal: null, differencesOnly: false, reconciliations };
  return {
    refusal: `promotion of ${rollout.pipeline} refused: the newest reconciliation of ${versionsLabel} must compare clean — ${problems.join("; ")}. If green is wrong, abort the rollout and start one with a corrected spec; once green has caught up or been fixed, run the reconciliation again (the rollout page, or the workers' next pass) and ask again`,
    differencesOnly,
    reconciliations,
  };
}

/** null when clean; otherwise what the reconciliation found, largest first, with its explanation. */
function whyNotClean(
  status: string,
  c: Pick<TGateReconciliation, "onlyBlue" | "onlyGreen" | "differing">,
  report: TReconciliationReport | null,
  error: string | null,
  acceptDifferences = false,
) {
  if (status === "failed") return `failed: ${error ?? "no reason recorded"}`;
  const reasons = (report?.notComparable ?? []).map((x) => `${x.what}: ${x.reason}`).join("; ");
  if (status === "waiting") return `is waiting, nothing compared yet (${reasons})`;
  if (status === "not_comparable") return `could not line the results up (${reasons})`;
  const [differing, onlyBlue, onlyGreen] = [c.differing ?? 0, c.onlyBlue ?? 0, c.onlyGreen ?? 0];
  // Differences a person read and accepted (the request says so, and its approver sees them): a
  // completed comparison is still required — failed, waiting and not comparable always block.
  if (differing + onlyBlue + onlyGreen === 0 || acceptDifferences) return null;
  const found = [
    differing > 0 ? `${differing} keys differ` : null,
    onlyBlue > 0 ? `${onlyBlue} keys only in blue` : null,
    onlyGreen > 0 ? `${onlyGreen} keys only in green` : null,
  ].filter(Boolean);
  const largest = report?.differences[0];
  const example = largest
    ? `, largest at ${JSON.stringify(largest.key)}: ${largest.columns.map((d) => `${d.column} blue ${d.blue}, green ${d.green}`).join(", ")}`
    : "";
  const why = report?.outcomes?.explanations.slice(0, 3) ?? [];
  return `found ${found.join(", ")}${example}${why.length > 0 ? ` — why: ${why.join("; ")}` : ""}`;
}

/** The rule for the running rollout whose candidate is `greenVersionId`; null without one (applying refuses it). */
export async function promotionGateOfCandidate(
  db: TDb,
  greenVersionId: string,
  opts: { acceptDifferences?: boolean } = {},
): Promise<TPromotionGate | null> {
  const r = await firstRowOf(
    db,
    rolloutsWithVersions()
      .select([
        "p.name as pipeline",
        "r.blue_version_id as blue",
        "b.version as blue_version",
        "r.green_version_id as green",
        "g.version as green_version",
      ])
      .where("r.green_version_id", "=", greenVersionId)
      .where("r.state", "=", "running"),
  );
  if (!r) return null;
  return promotionGate(
    db,
    {
      pipeline: r.pipeline,
      blue: { pipelineVersionId: r.blue, version: r.blue_version },
      green: { pipelineVersionId: r.green, version: r.green_version },
    },
    opts,
  );
}
