// How two sides' results line up — pure, from their shapes (sink-shape.ts). Windows are compared at a
// common grain: both sides' windows rolled up to the least common multiple of their sizes and to the
// group-by columns both have, where the measure merges (sum and count add up, min and max take the
// extreme); an average or a distinct count cannot be merged from the stored results, so it is compared
// only where neither side is rolled up. Ledgers and CDC tables are compared row by row on their key,
// over the source offsets both have read. Whatever cannot be lined up is listed with the reason.
import { formatDuration, formatMeasure, type TColumn, type TMeasure } from "@sluice/pipeline-spec";
import type { TReconcileBasis } from "./reconciliation-report";
import type { TSinkShape } from "./sink-shape";

export interface TComparedColumn {
  name: string;
  /** How a side rolled up to the common grain merges the column ("as is": no side is rolled up). */
  merge: "as is" | "sum" | "min" | "max";
  /** Both sides numeric: the difference green − blue is computed and ranks the differences. */
  numeric: boolean;
  /** A total over the range means something (sums, counts, a ledger's numbers — not a min or an average). */
  additive: boolean;
}

export interface TNotComparable {
  what: string;
  reason: string;
}

interface TComparable {
  comparable: true;
  columns: TComparedColumn[];
  notComparable: TNotComparable[];
}

export type TComparisonPlan =
  | { comparable: false; basis: TReconcileBasis | null; notComparable: TNotComparable[] }
  | (TComparable & {
      basis: "event_time";
      group: string[];
      /** Tumbling windows: the common grain (ms). Null: identical sliding windows, compared as they are. */
      grainMs: number | null;
      rollUp: { blue: boolean; green: boolean };
      latenessMs: { blue: number; green: number };
    })
  | (TComparable & { basis: "same_offsets"; group: string[]; rollUp: { blue: boolean; green: boolean } })
  | (TComparable & { basis: "offsets"; key: string[]; rewritten: boolean });

const NUMERIC = new Set(["int", "decimal", "double"]);
const MERGE: Partial<Record<TMeasure["fn"], TComparedColumn["merge"]>> = {
  sum: "sum",
  count: "sum",
  min: "min",
  max: "max",
};

export function planComparison(blue: TSinkShape, green: TSinkShape): TComparisonPlan {
  if (blue.kind === "webhook" || green.kind === "webhook")
    return refuse(
      null,
      "result",
      "a webhook sink keeps no table to compare: only Postgres sinks can be reconciled",
    );
  if (blue.kind !== green.kind)
    return refuse(null, "result", `blue writes ${KIND_WORDS[blue.kind]}, green ${KIND_WORDS[green.kind]}`);
  if (blue.kind === "windows" && green.kind === "windows") return planWindows(blue, green);
  if (blue.kind === "running" && green.kind === "running") {
    if (blue.topic !== green.topic) return differentTopics("same_offsets", blue.topic, green.topic);
    const groups = commonGroups(blue.groupBy, green.groupBy);
    const measures = compareMeasures(blue, green, groups.rollUp);
    return {
      comparable: true,
      basis: "same_offsets",
      group: groups.group,
      rollUp: groups.rollUp,
      columns: measures.columns,
      notComparable: [...groups.notComparable, ...measures.notComparable],
    };
  }
  if (blue.kind === "rows" && green.kind === "rows") return planRows(blue, green);
  return refuse(null, "result", "unknown sink kinds");
}

type TWindows = Extract<TSinkShape, { kind: "windows" }>;
type TRows = Extract<TSinkShape, { kind: "rows" }>;

const KIND_WORDS: Record<TSinkShape["kind"], string> = {
  windows: "event-time windows",
  running: "a running aggregate without windows",
  rows: "rows (a ledger or CDC table)",
  webhook: "to a webhook",
};

function planWindows(blue: TWindows, green: TWindows): TComparisonPlan {
  const tumbling = (w: TWindows["window"]) => w.slideMs === w.sizeMs;
  let grainMs: number | null;
  const timeRollUp = { blue: false, green: false };
  if (tumbling(blue.window) && tumbling(green.window)) {
    grainMs = lcm(blue.window.sizeMs, green.window.sizeMs);
    timeRollUp.blue = blue.window.sizeMs !== grainMs;
    timeRollUp.green = green.window.sizeMs !== grainMs;
  } else if (blue.window.sizeMs === green.window.sizeMs && blue.window.slideMs === green.window.slideMs) {
    grainMs = null;
  } else {
    return refuse(
      "event_time",
      "windows",
      `blue's windows are ${windowWords(blue.window)}, green's ${windowWords(green.window)}: overlapping (sliding) windows cannot be rolled up to a common grain — only tumbling windows, or identical sliding ones, are compared`,
    );
  }
  const groups = commonGroups(blue.groupBy, green.groupBy);
  const rollUp = {
    blue: timeRollUp.blue || groups.rollUp.blue,
    green: timeRollUp.green || groups.rollUp.green,
  };
  const measures = compareMeasures(blue, green, rollUp);
  return {
    comparable: true,
    basis: "event_time",
    group: groups.group,
    grainMs,
    rollUp,
    latenessMs: { blue: blue.latenessMs, green: green.latenessMs },
    columns: measures.columns,
    notComparable: [...groups.notComparable, ...measures.notComparable],
  };
}

function windowWords(w: TWindows["window"]): string {
  return w.slideMs === w.sizeMs
    ? `tumbling ${formatDuration(w.sizeMs)}`
    : `sliding ${formatDuration(w.sizeMs)} every ${formatDuration(w.slideMs)}`;
}

/** The group-by columns both sides have (blue's order); a side with more is rolled up to them. */
function commonGroups(blue: string[], green: string[]) {
  const group = blue.filter((c) => green.includes(c));
  const notComparable: TNotComparable[] = [];
  const only = (mine: string[], side: string) => {
    const extra = mine.filter((c) => !group.includes(c));
    if (extra.length > 0)
      notComparable.push({
        what: `group by ${extra.join(", ")}`,
        reason: `only ${side} groups by ${extra.join(", ")}: its rows are summed over ${extra.length > 1 ? "them" : "it"} and compared per ${group.length > 0 ? group.join(", ") : "window (totals)"}`,
      });
    return extra.length > 0;
  };
  return { group, rollUp: { blue: only(blue, "blue"), green: only(green, "green") }, notComparable };
}

type TMeasured = { measures: Record<string, TMeasure>; columns: TColumn[] };

function compareMeasures(blue: TMeasured, green: TMeasured, rollUp: { blue: boolean; green: boolean }) {
  const columns: TComparedColumn[] = [];
  const notComparable: TNotComparable[] = [];
  const names = [...new Set([...Object.keys(blue.measures), ...Object.keys(green.measures)])].sort();
  for (const name of names) {
    const b = blue.measures[name];
    const g = green.measures[name];
    if (!b || !g) {
      notComparable.push({ what: `measure ${name}`, reason: `only ${b ? "blue" : "green"} has it` });
      continue;
    }
    const bt = blue.columns.find((c) => c.name === name)?.type;
    const gt = green.columns.find((c) => c.name === name)?.type;
    const numeric = bt !== undefined && gt !== undefined && NUMERIC.has(bt) && NUMERIC.has(gt);
    if (!numeric && bt !== gt) {
      notComparable.push({ what: `measure ${name}`, reason: `blue's is ${bt}, green's ${gt}` });
      continue;
    }
    const additive = numeric && (b.fn === "sum" || b.fn === "count") && b.fn === g.fn;
    if (!rollUp.blue && !rollUp.green) {
      columns.push({ name, merge: "as is", numeric, additive });
      continue;
    }
    const merge = MERGE[b.fn];
    if (b.fn !== g.fn || !merge) {
      notComparable.push({
        what: `measure ${name}`,
        reason:
          b.fn !== g.fn
            ? `blue's is ${formatMeasure(b)}, green's ${formatMeasure(g)}: different functions cannot be compared at a common grain`
            : `${b.fn} cannot be merged from the stored windows (the table keeps the ${b.fn === "avg" ? "average, not its sum and count" : "count, not the values"}): it is compared only when both sides have the same windows and groups`,
      });
      continue;
    }
    columns.push({ name, merge, numeric, additive });
  }
  return { columns, notComparable };
}

function planRows(blue: TRows, green: TRows): TComparisonPlan {
  if (blue.topic !== green.topic) return differentTopics("offsets", blue.topic, green.topic);
  if (blue.key.length !== green.key.length || blue.key.some((k) => !green.key.includes(k)))
    return refuse(
      "offsets",
      "key",
      `blue's rows are keyed by ${blue.key.join(", ")}, green's by ${green.key.join(", ")}: rows cannot be matched`,
    );
  const columns: TComparedColumn[] = [];
  const notComparable: TNotComparable[] = [];
  const greenCols = new Map(green.columns.map((c) => [c.name, c]));
  const volatile = new Set([...blue.volatile, ...green.volatile]);
  for (const c of blue.columns) {
    if (blue.key.includes(c.name)) continue;
    const g = greenCols.get(c.name);
    if (!g) notComparable.push({ what: `column ${c.name}`, reason: "only blue has it" });
    else if (volatile.has(c.name))
      notComparable.push({
        what: `column ${c.name}`,
        reason: "rewritten by the next change of the key, which may lie beyond the compared offsets",
      });
    else if (NUMERIC.has(c.type) && NUMERIC.has(g.type))
      columns.push({ name: c.name, merge: "as is", numeric: true, additive: true });
    else if (c.type === g.type)
      columns.push({ name: c.name, merge: "as is", numeric: false, additive: false });
    else notComparable.push({ what: `column ${c.name}`, reason: `blue's is ${c.type}, green's ${g.type}` });
  }
  for (const g of green.columns)
    if (!blue.key.includes(g.name) && !blue.columns.some((c) => c.name === g.name))
      notComparable.push({ what: `column ${g.name}`, reason: "only green has it" });
  return {
    comparable: true,
    basis: "offsets",
    key: blue.key,
    rewritten: blue.rewritten || green.rewritten,
    columns,
    notComparable,
  };
}

function differentTopics(basis: TReconcileBasis, blue: string, green: string): TComparisonPlan {
  return refuse(
    basis,
    "source",
    `blue reads topic ${blue}, green ${green}: offsets of different topics cannot be lined up`,
  );
}

function refuse(basis: TReconcileBasis | null, what: string, reason: string): TComparisonPlan {
  return { comparable: false, basis, notComparable: [{ what, reason }] };
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

export function lcm(a: number, b: number): number {
  return (a / gcd(a, b)) * b;
}
