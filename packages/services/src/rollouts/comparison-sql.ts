// The reconciliation's SQL, built from a comparison plan — set-based, one full outer join of the two
// sides in Postgres, so Node holds only counts and bounded samples whatever the tables' sizes.
// Identifiers are the plan's (validated spec columns, the caller's validated table names), quoted by
// quoteIdentifier; every value is a parameter. Internal aliases are positional (k0…, v0…), so no
// user column name can collide with them.
//
//   b, g   each side inside the range: key columns k0…, compared values v0…, `_rows` (the table's rows
//          behind the key: > 1 when rolled up) and `_in` (the row lies inside the range; rows beyond it
//          are kept for ledgers, to tell "not yet on the other side" from "rewritten there later")
//   c      b FULL JOIN g on the key, with each key's category:
//          matching | differing | only_blue | only_green | green_ahead | blue_ahead | outside
import { quoteIdentifier } from "@sluice/pipeline-spec";
import type { TComparedColumn, TComparisonPlan } from "./plan-comparison";

type TPlan = Extract<TComparisonPlan, { comparable: true }>;

export interface TComparisonQuery {
  /** Key column names, in k0… order. */
  key: string[];
  /** How many leading key columns are group-by columns (distinct groups are counted over them). */
  groupColumns: number;
  columns: TComparedColumn[];
  summary: { text: string; values: unknown[] };
  samples: { text: string; values: unknown[] };
}

export interface TComparisonSqlInput {
  plan: TPlan;
  /** Quoted, schema-qualified table names. */
  tables: { blue: string; green: string };
  /** event_time: window bounds; offsets and same_offsets: per partition [from, to). */
  range: {
    fromTime: Date | null;
    toTime: Date | null;
    from: Record<string, number>;
    to: Record<string, number>;
  };
  topic: string;
  /** Columns rendered as ISO instants in samples (the rest as text). */
  timestamps: ReadonlySet<string>;
  samples: number;
  differences: number;
}

const TEXT_CHARS = 200;

export function comparisonSql(input: TComparisonSqlInput): TComparisonQuery {
  const { plan } = input;
  const key =
    plan.basis === "offsets"
      ? plan.key
      : [...plan.group, ...(plan.basis === "event_time" ? ["window_start"] : [])];
  const groupColumns = plan.basis === "offsets" ? 0 : plan.group.length;
  const { columns } = plan;
  const build = (tail: (values: unknown[]) => string) => {
    const values: unknown[] = [];
    const param = (v: unknown) => {
      values.push(v);
      return `$${values.length}`;
    };
    const sides = `WITH b AS (${sideSql(input, "blue", param)}),
      g AS (${sideSql(input, "green", param)}),
      c AS (${joinSql(key.length, columns)})`;
    return { text: `${sides}\n${tail(values)}`, values };
  };

  const k = key.map((_, i) => `k${i}`);
  // Over `c` behind OFFSET 0: otherwise Postgres inlines c and evaluates its category CASE (every
  // compared column's IS DISTINCT FROM) once per FILTER that reads it, ~20 times a row instead of once —
  // half the counts' time at 1M rows a side (docs/performance.md, "Rollouts: reconciliation and the
  // serving switch").
  const summary = build(() => {
    const groups =
      groupColumns === 0
        ? []
        : ["b", "g"].map((s) => {
            const cols = k.slice(0, groupColumns);
            const distinct = cols.length === 1 ? cols[0] : `(${cols.join(", ")})`;
            return `count(DISTINCT ${distinct}) FILTER (WHERE ${s}_in) AS ${s}_groups`;
          });
    const perColumn = columns.flatMap((c, i) => [
      `count(*) FILTER (WHERE category = 'differing' AND b${i} IS DISTINCT FROM g${i}) AS d${i}`,
      ...(c.additive
        ? [
            `(sum(b${i}) FILTER (WHERE b_in))::text AS bt${i}`,
            `(sum(g${i}) FILTER (WHERE g_in))::text AS gt${i}`,
          ]
        : []),
    ]);
    return `SELECT ${[
      ...["matching", "differing", "only_blue", "only_green"].map(
        (cat) => `count(*) FILTER (WHERE category = '${cat}') AS ${cat}`,
      ),
      `count(*) FILTER (WHERE category IN ('green_ahead', 'blue_ahead')) AS later`,
      `count(*) FILTER (WHERE b_in) AS b_keys`,
      `coalesce(sum(b_rows) FILTER (WHERE b_in), 0) AS b_rows`,
      `count(*) FILTER (WHERE g_in) AS g_keys`,
      `coalesce(sum(g_rows) FILTER (WHERE g_in), 0) AS g_rows`,
      ...groups,
      ...perColumn,
    ].join(",\n  ")}
    FROM (SELECT * FROM c OFFSET 0) c`;
  });

  const samples = build((values) => {
    const limit = (n: number) => {
      values.push(n);
      return `$${values.length}`;
    };
    const render = (expr: string, name: string) =>
      input.timestamps.has(name)
        ? `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
        : `left(${expr}::text, ${TEXT_CHARS})`;
    const numeric = columns.map((c, i) => (c.numeric ? i : -1)).filter((i) => i >= 0);
    const magnitude =
      numeric.length === 0
        ? "NULL::numeric"
        : `greatest(${numeric.map((i) => `CASE WHEN b${i} IS DISTINCT FROM g${i} THEN abs(g${i} - b${i}) END`).join(", ")})`;
    const out = [
      "category",
      ...key.map((name, i) => `${render(`k${i}`, name)} AS rk${i}`),
      ...columns.flatMap((c, i) => [
        `${render(`b${i}`, c.name)} AS rb${i}`,
        `${render(`g${i}`, c.name)} AS rg${i}`,
        `(b${i} IS DISTINCT FROM g${i}) AS df${i}`,
        c.numeric ? `(g${i} - b${i})::text AS dl${i}` : `NULL::text AS dl${i}`,
      ]),
      "magnitude::text AS mt",
    ].join(", ");
    const order = k.join(", ");
    return `, x AS MATERIALIZED (SELECT c.*, ${magnitude} AS magnitude FROM c WHERE category IN ('only_blue', 'only_green', 'differing'))
      (SELECT ${out} FROM x WHERE category = 'only_blue' ORDER BY ${order || "1"} LIMIT ${limit(input.samples)})
      UNION ALL (SELECT ${out} FROM x WHERE category = 'only_green' ORDER BY ${order || "1"} LIMIT ${limit(input.samples)})
      UNION ALL (SELECT ${out} FROM x WHERE category = 'differing' ORDER BY magnitude DESC NULLS LAST${order ? `, ${order}` : ""} LIMIT ${limit(input.differences)})`;
  });

  return { key, groupColumns, columns, summary, samples };
}

function sideSql(input: TComparisonSqlInput, side: "blue" | "green", param: (v: unknown) => string): string {
  const { plan, range } = input;
  const table = input.tables[side];
  const q = (c: string) => `t.${quoteIdentifier(c)}`;
  const value = (c: TComparedColumn, merged: boolean) => {
    const expr = merged && c.merge !== "as is" ? `${c.merge}(${q(c.name)})` : q(c.name);
    return c.numeric ? `(${expr})::numeric` : expr;
  };
  const values = (merged: boolean) => plan.columns.map((c, i) => `${value(c, merged)} AS v${i}`);

  if (plan.basis === "offsets") {
    const keys = plan.key.map((c, i) => `${q(c)} AS k${i}`);
    const partitions = Object.keys(range.to);
    const bounds = `unnest(${param(partitions.map(Number))}::int[], ${param(partitions.map((p) => range.from[p] ?? 0))}::bigint[], ${param(partitions.map((p) => range.to[p]))}::bigint[]) AS r(p, lo, hi)`;
    return `SELECT ${[...keys, ...values(false), "1 AS _rows", "coalesce(t._offset >= r.lo AND t._offset < r.hi, false) AS _in"].join(", ")}
      FROM ${table} t LEFT JOIN ${bounds} ON r.p = t._partition
      WHERE t._topic = ${param(input.topic)}`;
  }

  const rollUp = plan.rollUp[side];
  const groups = plan.group.map((c, i) => `${q(c)} AS k${i}`);
  const where: string[] = [];
  let time: string[] = [];
  if (plan.basis === "event_time") {
    const bucket =
      rollUp && plan.grainMs !== null
        ? `date_bin(${param(`${plan.grainMs} milliseconds`)}::interval, t.window_start, timestamptz '1970-01-01 00:00:00+00')`
        : "t.window_start";
    time = [`${bucket} AS k${plan.group.length}`];
    if (range.toTime) where.push(`t.window_end <= ${param(range.toTime)}::timestamptz`);
    if (range.fromTime) where.push(`t.window_start >= ${param(range.fromTime)}::timestamptz`);
  }
  const select = [
    ...groups,
    ...time,
    ...values(rollUp),
    rollUp ? "count(*) AS _rows" : "1 AS _rows",
    "true AS _in",
  ];
  const groupBy =
    rollUp && groups.length + time.length > 0
      ? ` GROUP BY ${Array.from({ length: groups.length + time.length }, (_, i) => i + 1).join(", ")}`
      : "";
  return `SELECT ${select.join(", ")} FROM ${table} t${where.length ? ` WHERE ${where.join(" AND ")}` : ""}${groupBy}`;
}

function joinSql(keys: number, columns: TComparedColumn[]): string {
  const k = Array.from({ length: keys }, (_, i) => `k${i}`);
  const differs = columns.map((_, i) => `b.v${i} IS DISTINCT FROM g.v${i}`).join(" OR ") || "false";
  return `SELECT ${[
    ...k,
    "b._rows AS b_rows",
    "g._rows AS g_rows",
    "b._in AS b_in",
    "g._in AS g_in",
    ...columns.flatMap((_, i) => [`b.v${i} AS b${i}`, `g.v${i} AS g${i}`]),
    `CASE WHEN b._in AND g._in THEN CASE WHEN ${differs} THEN 'differing' ELSE 'matching' END
          WHEN b._in AND g._in IS NULL THEN 'only_blue'
          WHEN g._in AND b._in IS NULL THEN 'only_green'
          WHEN b._in THEN 'green_ahead'
          WHEN g._in THEN 'blue_ahead'
          ELSE 'outside' END AS category`,
  ].join(", ")}
    FROM b FULL JOIN g ${k.length > 0 ? `USING (${k.join(", ")})` : "ON true"}`;
}
