// The pipeline as a graph of its phases, in the engine's order (decode → contract → expectations →
// filter → late → dedup → join → window / CDC / webhook → sink), with the rows that took each edge over
// a range: the main line carries what is left after each phase, and a branch leaves it for every
// outcome that is not the sink. "Nothing vanishes silently": input = sink + every branch, checked here.
// A join is a phase after dedup. A batch counts the rows it hands the join as `sink` (less the ones the
// join dead-letters `dimension_missing` at once, which it counts `deadLetter`), but the join writes only
// the rows it decides: the rest wait for the dimension (state) and are written, or dead-lettered, in a
// later batch. So with a join the graph takes the join's own counts over the range's batches (their
// progress records' join reports): the sink edge is the rows the join wrote (joined, at the bound,
// missing), the `dimension_missing` dead letters are a branch of the join (not of decode), and the rows
// that started waiting less those released is the edge to "waiting for dimension" — with it,
// input = sink + every branch + that net waiting, exactly, batch by batch. Several outputs show as the
// sink's tables.
import type { CountedOutcome } from "@sluice/engine";
import { z } from "zod";
import type { TJoinProgressView } from "../progress/combine-progress-view";

/** Rows per outcome over the range; dropped per expectation in droppedBy. */
export interface TFlowTotals extends Record<CountedOutcome, number> {
  inputRows: number;
  /** Dropped per `drop` expectation. */
  droppedBy: Record<string, number>;
  /** Violations per expectation (warn: kept and counted; drop: these rows left). */
  violations: Record<string, number>;
  unbalancedBatches: number;
}

export interface TFlowNode {
  id: string;
  /** `state`: rows held beside a phase (a join's rows waiting for the dimension), not an outcome. */
  kind: "source" | "phase" | "sink" | "branch" | "state";
  label: string;
  /** A second line: the topic, the rule, the table. */
  detail: string | null;
  /** A `state` node: what it holds now (after the newest batch); the page formats it. */
  holds?: { rows: number; bytes: number };
}

export interface TFlowEdge {
  from: string;
  to: string;
  rows: number;
  /** A branch where rows leave the main line (dead letter, quarantined, dropped, filtered, late, duplicate, stale). */
  leaves: boolean;
  /**
   * To a `state` node: `rows` is the net change over the range — rows that started waiting less rows
   * released from waiting (negative when more were released) — counted in the balance.
   */
  state?: boolean;
}

/** The join counts the graph sums over a range. */
export const FLOW_JOIN_COUNTS = [
  "joined",
  "joinedAtBound",
  "missing",
  "deadLettered",
  "held",
  "released",
] as const satisfies readonly (keyof TJoinProgressView)[];
/** A join's reports summed over the range's batches (their progress records, `join`): the counts one batch's view names. */
export type TFlowJoinTotals = Pick<TJoinProgressView, (typeof FLOW_JOIN_COUNTS)[number]> & {
  /** The same batches' `sink` outcome: the rows they handed the join, less its in-batch dead letters. */
  sink: number;
};

/** What is held now, from the version's checkpoint, and the join's counts over the range. */
export interface TFlowNow {
  joinWaiting: { rows: number; bytes: number } | null;
  /** null: no batch of a join in the range (or no join). */
  join?: TFlowJoinTotals | null;
}

export interface TPipelineFlow {
  nodes: TFlowNode[];
  edges: TFlowEdge[];
  input: number;
  /** sink + every branch (+ a join's net waiting). */
  outcomes: number;
  /** A join's rows that started waiting less those released over the range; 0 without a join. */
  waiting: number;
  /** input = outcomes, and every batch in the range balanced on its own. */
  balanced: boolean;
  /** `warn` expectations: rows that violated them but stayed on the line. */
  warnings: { name: string; rows: number }[];
}

/** What the graph needs from the stored spec (read leniently: it was validated when registered). */
export const ZFlowSpec = z.object({
  source: z
    .object({ kafka: z.object({ topic: z.string() }) })
    .optional()
    .catch(undefined),
  expectations: z
    .array(z.object({ name: z.string(), action: z.string().default("warn"), expr: z.string().optional() }))
    .catch([]),
  transform: z.object({ filter: z.string().optional() }).optional().catch(undefined),
  eventTime: z.object({ column: z.string() }).optional().catch(undefined),
  dedupe: z
    .object({ key: z.array(z.string()) })
    .optional()
    .catch(undefined),
  join: z
    .object({
      dimension: z.union([
        z.object({ kafka: z.object({ topic: z.string() }) }),
        z.object({ pipeline: z.string() }),
      ]),
      waitFor: z.union([z.string(), z.number()]).optional(),
    })
    .optional()
    .catch(undefined),
  outputs: z
    .record(
      z.string(),
      z.object({
        sink: z
          .object({
            postgres: z.object({ table: z.string() }).optional(),
            webhook: z.object({}).passthrough().optional(),
          })
          .optional()
          .catch(undefined),
      }),
    )
    .optional()
    .catch(undefined),
  aggregate: z.object({}).passthrough().optional().catch(undefined),
  cdc: z.object({}).passthrough().optional().catch(undefined),
  sink: z
    .object({
      postgres: z.object({ table: z.string() }).optional(),
      webhook: z.object({}).passthrough().optional(),
    })
    .optional()
    .catch(undefined),
});
export type TFlowSpec = z.infer<typeof ZFlowSpec>;

/** How the graph names a join's dead letters (reason `dimension_missing`), beside "dead letter (undecodable)". */
export const DEAD_LETTER_DIMENSION_MISSING = "dead letter (dimension missing)";

export function pipelineFlow(
  spec: TFlowSpec,
  t: TFlowTotals,
  now: TFlowNow = { joinWaiting: null },
): TPipelineFlow {
  const nodes: TFlowNode[] = [
    { id: "source", kind: "source", label: "Kafka source", detail: spec.source?.kafka.topic ?? null },
  ];
  const edges: TFlowEdge[] = [];
  let at = "source";
  let flowing = t.inputRows;
  let leaving = 0;
  const phase = (
    id: string,
    label: string,
    detail: string | null,
    branches: { id: string; label: string; rows: number }[],
  ) => {
    nodes.push({ id, kind: "phase", label, detail });
    edges.push({ from: at, to: id, rows: flowing, leaves: false });
    for (const b of branches) {
      nodes.push({ id: `${id}:${b.id}`, kind: "branch", label: b.label, detail: null });
      edges.push({ from: id, to: `${id}:${b.id}`, rows: b.rows, leaves: true });
      flowing -= b.rows;
      leaving += b.rows;
    }
    at = id;
  };

  // With a join, the batches' deadLetter outcome also counts the join's in-batch `dimension_missing`
  // dead letters: the join's counts say how many (each batch: its rows + released = written +
  // dead-lettered + started waiting), and the graph shows them at the join.
  const j = spec.join ? (now.join ?? null) : null;
  const written = j ? j.joined + j.joinedAtBound + j.missing : 0;
  const waitingNet = j ? j.held - j.released : 0;
  const joinFailedAtOnce = j ? written + j.deadLettered + waitingNet - j.sink : 0;
  phase("decode", "Decode", "JSON", [
    { id: "dead-letter", label: "dead letter (undecodable)", rows: t.deadLetter - joinFailedAtOnce },
  ]);
  phase("contract", "Contract", null, [{ id: "quarantined", label: "quarantined", rows: t.quarantined }]);
  if (spec.expectations.length > 0) {
    const drops = spec.expectations.filter((e) => e.action === "drop").length;
    phase(
      "expectations",
      "Expectations",
      `${spec.expectations.length} rule${spec.expectations.length === 1 ? "" : "s"}, ${drops} drop`,
      spec.expectations
        .filter((e) => e.action === "drop")
        .map((e) => ({
          id: `dropped:${e.name}`,
          label: `dropped by ${e.name}`,
          rows: t.droppedBy[e.name] ?? 0,
        })),
    );
  }
  // Drops by an expectation no longer in this spec (renamed since) still left the line: show them too.
  const listed = new Set(spec.expectations.map((e) => e.name));
  const orphanDrops = Object.entries(t.droppedBy).filter(([name, n]) => !listed.has(name) && n > 0);
  if (orphanDrops.length > 0 && !nodes.some((n) => n.id === "expectations"))
    phase("expectations", "Expectations", null, []);
  for (const [name, rows] of orphanDrops) {
    nodes.push({
      id: `expectations:dropped:${name}`,
      kind: "branch",
      label: `dropped by ${name}`,
      detail: null,
    });
    edges.push({ from: "expectations", to: `expectations:dropped:${name}`, rows, leaves: true });
    flowing -= rows;
    leaving += rows;
  }
  if (spec.transform?.filter || t.filtered > 0)
    phase("filter", "Filter", spec.transform?.filter ?? null, [
      { id: "filtered", label: "filtered out", rows: t.filtered },
    ]);
  if (spec.eventTime || t.late > 0)
    phase("late", "Watermark", spec.eventTime?.column ?? null, [{ id: "late", label: "late", rows: t.late }]);
  // An append ledger also counts rows whose key the sink already holds as duplicates.
  phase("dedup", "Dedup", spec.dedupe ? spec.dedupe.key.join(", ") : "sink key", [
    { id: "duplicate", label: "duplicate", rows: t.duplicate },
  ]);
  if (spec.join) {
    phase(
      "join",
      "Join",
      `${"pipeline" in spec.join.dimension ? `pipeline ${spec.join.dimension.pipeline}` : spec.join.dimension.kafka.topic} as of event time${spec.join.waitFor !== undefined ? `, waits ≤ ${spec.join.waitFor}` : ""}`,
      [{ id: "dead-letter", label: DEAD_LETTER_DIMENSION_MISSING, rows: j?.deadLettered ?? 0 }],
    );
    nodes.push({
      id: "join:waiting",
      kind: "state",
      label: "waiting for dimension",
      detail: null,
      holds: now.joinWaiting ?? { rows: 0, bytes: 0 },
    });
    edges.push({ from: "join", to: "join:waiting", rows: waitingNet, leaves: false, state: true });
    flowing -= waitingNet;
  }
  if (spec.aggregate) phase("window", "Window", null, []);
  if (spec.cdc || t.stale > 0)
    phase("cdc", "CDC apply", null, [{ id: "stale", label: "stale (older change)", rows: t.stale }]);
  if (spec.sink?.webhook) phase("webhook", "Webhook", null, []);

  nodes.push({
    id: "sink",
    kind: "sink",
    label: spec.outputs
      ? `Outputs (${Object.keys(spec.outputs).length})`
      : spec.sink?.webhook
        ? "Delivered"
        : "Sink",
    detail: spec.outputs
      ? Object.entries(spec.outputs)
          .map(([name, o]) => `${name} → ${o.sink?.postgres?.table ?? (o.sink?.webhook ? "webhook" : "?")}`)
          .join(", ")
      : (spec.sink?.postgres?.table ?? null),
  });
  // With a join, what reached the sink is what the join wrote; the rest of t.sink waits, or was
  // dead-lettered from waiting.
  const sink = spec.join ? written : t.sink;
  edges.push({ from: at, to: "sink", rows: sink, leaves: false });
  const outcomes = sink + leaving + waitingNet;
  const warnings = spec.expectations
    .filter((e) => e.action !== "drop")
    .map((e) => ({ name: e.name, rows: t.violations[e.name] ?? 0 }));
  return {
    nodes,
    edges,
    input: t.inputRows,
    outcomes,
    waiting: waitingNet,
    // With a join, its reports and the rollups must also count the same rows into it.
    balanced:
      outcomes === t.inputRows &&
      flowing === sink &&
      (j === null || j.sink === t.sink) &&
      t.unbalancedBatches === 0,
    warnings,
  };
}
