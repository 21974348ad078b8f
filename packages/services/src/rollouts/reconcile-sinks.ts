// Reconcile two versions of a pipeline — blue (serving) against green (the candidate) — over what both
// have committed: which keys only one side has, which values differ (largest first), and the outcome
// counts that explain them. Everything is read in one REPEATABLE READ snapshot (checkpoints, tables,
// progress records agree with each other while the pipelines keep committing), compared set-based in
// Postgres (comparison-sql.ts); Node holds only counts and bounded samples. Nothing is written:
// run-reconciliation.ts stores the report. See docs/rollouts.md, "Reconciliation".
import { physicalSql, SINK_SCHEMA } from "@sluice/engine";
import { quoteIdentifier, type TColumn } from "@sluice/pipeline-spec";
import type pg from "pg";
import { comparisonSql, type TComparisonQuery } from "./comparison-sql";
import { explainOutcomes } from "./explain-outcomes";
import { findCommittedRange } from "./find-committed-range";
import { planComparison, type TComparisonPlan, type TNotComparable } from "./plan-comparison";
import {
  ZReconcileLimits,
  type TReconcileInput,
  type TReconciliationReport,
  type TRowValues,
  type TValueDifference,
} from "./reconciliation-report";
import { sinkShape, SOURCE_POSITION, type TSinkShape } from "./sink-shape";

/** A reconciliation that runs longer than this is cancelled by Postgres (and reported as failed). */
const STATEMENT_TIMEOUT = "15min";

export async function reconcileSinks(pool: pg.Pool, input: TReconcileInput): Promise<TReconciliationReport> {
  const started = Date.now();
  const limits = ZReconcileLimits.parse(input);
  const tables = { blue: qualifiedName(input.blue.table), green: qualifiedName(input.green.table) };
  const shapes = {
    blue: sinkShape(input.blue.spec, input.blue.output),
    green: sinkShape(input.green.spec, input.green.output),
  };
  const plan = planComparison(shapes.blue, shapes.green);
  const report: TReconciliationReport = {
    blue: { pipelineVersionId: input.blue.pipelineVersionId, table: tables.blue },
    green: { pipelineVersionId: input.green.pipelineVersionId, table: tables.green },
    status: "not_comparable",
    basis: plan.basis,
    notComparable: plan.notComparable,
    range: null,
    key: [],
    columns: [],
    counts: {
      blue: { rows: 0, keys: 0 },
      green: { rows: 0, keys: 0 },
      matching: 0,
      onlyBlue: 0,
      onlyGreen: 0,
      differing: 0,
      laterOnOtherSide: 0,
    },
    onlyBlue: [],
    onlyGreen: [],
    differences: [],
    outcomes: null,
    durationMs: 0,
  };
  const done = () => ({ ...report, durationMs: Date.now() - started });
  if (!plan.comparable) return done();

  const client = await pool.connect();
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    await client.query(`SET LOCAL TimeZone = 'UTC'`);
    await client.query(`SET LOCAL statement_timeout = '${STATEMENT_TIMEOUT}'`);
    const checked = await checkTables(client, input, plan);
    if ("waiting" in checked) {
      report.status = "waiting";
      report.notComparable = [...plan.notComparable, checked.waiting];
    } else if ("refused" in checked) {
      report.notComparable = [...plan.notComparable, ...checked.refused];
    } else {
      const usable = checked.plan;
      report.notComparable = usable.notComparable;
      const committed = await findCommittedRange(client, usable, input);
      report.range = committed.range;
      if (!committed.committed) {
        report.status = "waiting";
        report.notComparable = [...usable.notComparable, { what: "range", reason: committed.reason }];
      } else {
        const query = comparisonSql({
          plan: usable,
          tables,
          range: {
            fromTime:
              committed.range.basis === "event_time" && committed.range.from
                ? new Date(committed.range.from)
                : null,
            toTime:
              committed.range.basis === "event_time" && committed.range.to
                ? new Date(committed.range.to)
                : null,
            from: committed.from,
            to: committed.to,
          },
          topic: input.blue.spec.source.kafka.topic,
          timestamps: timestampColumns(shapes.blue),
          samples: limits.samples,
          differences: limits.differences,
        });
        await compare(client, query, report);
        report.status = "compared";
        if (report.counts.blue.keys + report.counts.green.keys === 0) {
          report.status = "waiting";
          report.notComparable = [
            ...report.notComparable,
            {
              what: "range",
              reason:
                committed.range.basis === "event_time"
                  ? "no window is final on both sides yet"
                  : "neither side holds a row inside the offsets both have read",
            },
          ];
        }
        // Progress records line up by offsets: only over the same topic.
        if (shapes.blue.topic === shapes.green.topic && Object.keys(committed.to).length > 0)
          report.outcomes = await explainOutcomes(client, input, committed);
      }
    }
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
  return done();
}

/**
 * `{ schema: "sluice_sinks", name: "t@v2" }` → `"sluice_sinks"."t@v2"` (a physical table, named by the
 * engine's rule); `{ schema: "public", name: "t" }` → `"public"."t"` — each part validated.
 */
function qualifiedName(t: { schema: string; name: string }): string {
  if (t.schema === SINK_SCHEMA) return physicalSql(t.name);
  return `${quoteIdentifier(t.schema)}.${quoteIdentifier(t.name)}`;
}

type TPlan = Extract<TComparisonPlan, { comparable: true }>;

/**
 * Both tables exist and have the columns the plan compares, with the same key types. A table not
 * created yet means that side has committed nothing; a compared column missing from a table (a table
 * older than the spec) is left out with why.
 */
async function checkTables(
  db: pg.PoolClient,
  input: TReconcileInput,
  plan: TPlan,
): Promise<{ plan: TPlan } | { waiting: TNotComparable } | { refused: TNotComparable[] }> {
  const res = await db.query<{ side: "blue" | "green"; column_name: string; data_type: string }>(
    `SELECT s.side, c.column_name, c.data_type
       FROM (VALUES ('blue', $1::text, $2::text), ('green', $3::text, $4::text)) AS s(side, schema, name)
       JOIN information_schema.columns c ON c.table_schema = s.schema AND c.table_name = s.name`,
    [input.blue.table.schema, input.blue.table.name, input.green.table.schema, input.green.table.name],
  );
  const types = { blue: new Map<string, string>(), green: new Map<string, string>() };
  for (const r of res.rows) types[r.side].set(r.column_name, r.data_type);
  for (const side of ["blue", "green"] as const)
    if (types[side].size === 0)
      return {
        waiting: {
          what: `${side}'s table`,
          reason: `${qualifiedName(input[side].table)} does not exist yet: ${side} has committed no batch`,
        },
      };
  const key =
    plan.basis === "offsets"
      ? [...plan.key, ...SOURCE_POSITION]
      : [...plan.group, ...(plan.basis === "event_time" ? ["window_start", "window_end"] : [])];
  const refused: TNotComparable[] = [];
  for (const column of new Set(key)) {
    const [b, g] = [types.blue.get(column), types.green.get(column)];
    if (!b || !g)
      refused.push({
        what: `column ${column}`,
        reason: `${!b ? "blue" : "green"}'s table has no column ${column}`,
      });
    else if (b !== g)
      refused.push({
        what: `column ${column}`,
        reason: `blue's is ${b}, green's ${g}: rows cannot be matched on it`,
      });
  }
  if (refused.length > 0) return { refused };
  const notComparable = [...plan.notComparable];
  const columns = plan.columns.filter((c) => {
    const missing = (["blue", "green"] as const).filter((s) => !types[s].has(c.name));
    if (missing.length > 0)
      notComparable.push({
        what: `column ${c.name}`,
        reason: `${missing.join(" and ")}'s table has no column ${c.name}`,
      });
    return missing.length === 0;
  });
  return { plan: { ...plan, columns, notComparable } };
}

function timestampColumns(shape: TSinkShape): Set<string> {
  const columns: TColumn[] = shape.kind === "webhook" ? [] : shape.columns;
  return new Set(columns.filter((c) => c.type === "timestamp").map((c) => c.name));
}

type TSummaryRow = Record<string, string | number | null>;

async function compare(
  db: pg.PoolClient,
  query: TComparisonQuery,
  report: TReconciliationReport,
): Promise<void> {
  const summary = (await db.query<TSummaryRow>(query.summary.text, query.summary.values)).rows[0]!;
  const n = (k: string) => Number(summary[k] ?? 0);
  const text = (k: string) => (summary[k] === null || summary[k] === undefined ? null : String(summary[k]));
  report.key = query.key;
  report.counts = {
    blue: {
      rows: n("b_rows"),
      keys: n("b_keys"),
      ...(query.groupColumns > 0 ? { groups: n("b_groups") } : {}),
    },
    green: {
      rows: n("g_rows"),
      keys: n("g_keys"),
      ...(query.groupColumns > 0 ? { groups: n("g_groups") } : {}),
    },
    matching: n("matching"),
    onlyBlue: n("only_blue"),
    onlyGreen: n("only_green"),
    differing: n("differing"),
    laterOnOtherSide: n("later"),
  };
  report.columns = query.columns.map((c, i) => ({
    column: c.name,
    merge: c.merge,
    differing: n(`d${i}`),
    blueTotal: c.additive ? text(`bt${i}`) : null,
    greenTotal: c.additive ? text(`gt${i}`) : null,
  }));

  const rows = (
    await db.query<Record<string, string | boolean | null>>(query.samples.text, query.samples.values)
  ).rows;
  const keyOf = (r: Record<string, unknown>): TRowValues =>
    Object.fromEntries(query.key.map((name, i) => [name, (r[`rk${i}`] as string | null) ?? null]));
  const side = (r: Record<string, unknown>, s: "b" | "g"): TRowValues => ({
    ...keyOf(r),
    ...Object.fromEntries(query.columns.map((c, i) => [c.name, (r[`r${s}${i}`] as string | null) ?? null])),
  });
  for (const r of rows) {
    if (r.category === "only_blue") report.onlyBlue.push(side(r, "b"));
    else if (r.category === "only_green") report.onlyGreen.push(side(r, "g"));
    else {
      const difference: TValueDifference = {
        key: keyOf(r),
        columns: query.columns.flatMap((c, i) =>
          r[`df${i}`]
            ? [
                {
                  column: c.name,
                  blue: (r[`rb${i}`] as string | null) ?? null,
                  green: (r[`rg${i}`] as string | null) ?? null,
                  delta: (r[`dl${i}`] as string | null) ?? null,
                },
              ]
            : [],
        ),
        magnitude: (r.mt as string | null) ?? null,
      };
      report.differences.push(difference);
    }
  }
}
