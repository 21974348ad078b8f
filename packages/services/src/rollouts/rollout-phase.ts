// Where a rollout stands, in one word and one line, for the rollout page and the fleet: how far green
// has caught up with blue, then what the newest reconciliation found. Pure: both readers compute it
// from what they already loaded, so the page and the fleet can never say different things.

export type TRolloutPhase =
  | "catching_up"
  | "reconciling"
  | "differences"
  | "not_comparable"
  | "ready"
  | "promotion_requested"
  | "green_failed"
  | "promoted"
  | "rolled_back"
  | "aborted";

export interface TRolloutProgress {
  /** Offsets green has committed since its start, over all partitions. */
  greenRead: number;
  /** Offsets blue has committed since green's start, over all partitions. */
  blueRead: number;
  /** greenRead ÷ blueRead, 0–100, rounded down (100 only when caught up). */
  percent: number;
  /** Green has committed at least what blue has on every partition. */
  caughtUp: boolean;
}

/** How far green has read, measured against what blue read over the same partitions since green's start. */
export function rolloutProgress(
  start: Record<string, number>,
  blue: Record<string, number>,
  green: Record<string, number>,
): TRolloutProgress {
  const partitions = new Set([...Object.keys(start), ...Object.keys(blue), ...Object.keys(green)]);
  let greenRead = 0;
  let blueRead = 0;
  let caughtUp = true;
  for (const p of partitions) {
    const from = start[p] ?? 0;
    const b = blue[p] ?? from;
    const g = green[p] ?? from;
    greenRead += Math.max(0, g - from);
    blueRead += Math.max(0, b - from);
    if (g < b) caughtUp = false;
  }
  const ratio = blueRead === 0 ? 1 : Math.min(1, greenRead / blueRead);
  const percent = caughtUp ? 100 : Math.min(99, Math.floor(ratio * 100));
  return { greenRead, blueRead, percent, caughtUp };
}

/** One output's newest reconciliation, as far as the phase needs it. */
export interface TOutputReconciliation {
  status: string;
  onlyBlue: number | null;
  onlyGreen: number | null;
  differing: number | null;
}

export interface TPhaseInput {
  state: "running" | "promoted" | "rolled_back" | "aborted";
  greenVersion: number;
  greenStatus: string;
  progress: TRolloutProgress;
  /** The newest reconciliation of the two versions, or null before the first. */
  reconciliation: TOutputReconciliation | null;
  /** A promotion change request waiting for approval. */
  promotionRequestId: string | null;
}

const plural = (n: number, one: string, many = `${one}s`) =>
  `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/** The rollout's phase and the line on-call reads ("green catching up 62%", "ready to promote"). */
export function rolloutPhase(i: TPhaseInput): { phase: TRolloutPhase; label: string } {
  if (i.state === "promoted") return { phase: "promoted", label: `promoted: v${i.greenVersion} serves` };
  if (i.state === "rolled_back") return { phase: "rolled_back", label: "rolled back: blue serves again" };
  if (i.state === "aborted") return { phase: "aborted", label: `aborted: v${i.greenVersion} dropped` };
  if (i.greenStatus === "failed")
    return { phase: "green_failed", label: `green (v${i.greenVersion}) failed` };
  if (i.promotionRequestId !== null)
    return {
      phase: "promotion_requested",
      label: `promotion requested (change request #${i.promotionRequestId})`,
    };
  const r = i.reconciliation;
  const found = r ? (r.onlyBlue ?? 0) + (r.onlyGreen ?? 0) + (r.differing ?? 0) : 0;
  // Differences in what both have committed show while green catches up too: a bug shows early.
  if (r?.status === "compared" && found > 0) {
    const parts = [
      r.differing ? plural(r.differing, "key differs", "keys differ") : null,
      r.onlyBlue ? `${plural(r.onlyBlue, "key")} only in blue` : null,
      r.onlyGreen ? `${plural(r.onlyGreen, "key")} only in green` : null,
    ].filter(Boolean);
    return { phase: "differences", label: `differences found: ${parts.join(", ")}` };
  }
  if (r?.status === "not_comparable")
    return { phase: "not_comparable", label: "not comparable: see the reconciliation" };
  if (!i.progress.caughtUp)
    return { phase: "catching_up", label: `green catching up ${i.progress.percent}%` };
  if (r?.status === "compared") return { phase: "ready", label: "ready to promote" };
  if (r?.status === "failed")
    return { phase: "reconciling", label: "caught up; the last reconciliation failed" };
  return { phase: "reconciling", label: "caught up; waiting for a reconciliation" };
}

/**
 * Every output's newest reconciliation as one, for the phase: compared only when all are, the keys
 * that differ summed; otherwise the first output's status that is not (failed, waiting, …).
 */
export function summarizeReconciliations(all: TOutputReconciliation[]): TOutputReconciliation | null {
  if (all.length === 0) return null;
  const notCompared = all.find((r) => r.status !== "compared");
  const sum = (k: "onlyBlue" | "onlyGreen" | "differing") => all.reduce((n, r) => n + (r[k] ?? 0), 0);
  const differs = sum("onlyBlue") + sum("onlyGreen") + sum("differing") > 0;
  return {
    // Differences found in one output show even while another is still waiting.
    status: differs ? "compared" : (notCompared?.status ?? "compared"),
    onlyBlue: sum("onlyBlue"),
    onlyGreen: sum("onlyGreen"),
    differing: sum("differing"),
  };
}
