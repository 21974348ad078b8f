// Rules for sinks: keys must name result columns, and the write mode must match how results change.
import { issue, type TPathSegment, type TSpecIssue } from "./errors";
import { aggregateResultKey, cdcResultKey, outputColumns } from "./output-columns";
import { defineRule } from "./rule";
import type { TColumn } from "./contract";

function keyColumnIssues(
  key: readonly string[],
  columns: readonly TColumn[],
  path: TPathSegment[],
  role: string,
): TSpecIssue[] {
  const names = columns.map((c) => c.name).join(", ");
  return key.flatMap((column, i) => {
    const found = columns.find((c) => c.name === column);
    if (!found)
      return [
        issue(
          [...path, i],
          `${JSON.stringify(column)} is not a column of the pipeline's output, so it cannot be ${role}: use one of ${names}`,
        ),
      ];
    if (found.optional)
      return [
        issue(
          [...path, i],
          `${column} can be null, so it cannot be ${role}: pick a required column or declare the field required`,
        ),
      ];
    return [];
  });
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x) => b.includes(x));

export const sinkRules = [
  defineRule(["contract", "transform", "aggregate", "cdc", "sink"], (spec) => {
    const { sink, aggregate, cdc } = spec;
    const columns = outputColumns(spec);
    if (sink.webhook) {
      const found = keyColumnIssues(
        sink.webhook.idempotencyKey,
        columns,
        ["sink", "webhook", "idempotencyKey"],
        "part of the idempotency key",
      );
      if (aggregate && aggregate.outputMode !== "append") {
        found.push(
          issue(
            ["aggregate", "outputMode"],
            `a webhook sends each result once per idempotency key, so an updated window would never be re-sent: use outputMode append with a webhook (or a postgres sink for ${aggregate.outputMode})`,
          ),
        );
      }
      return found;
    }
    const pg = sink.postgres;
    const keyPath = ["sink", "postgres", "key"];
    const found = keyColumnIssues(pg.key ?? [], columns, keyPath, "a sink key");
    if (aggregate) {
      const resultKey = aggregateResultKey(aggregate);
      if (aggregate.outputMode !== "append" && pg.mode === "append") {
        found.push(
          issue(
            ["sink", "postgres", "mode"],
            `outputMode ${aggregate.outputMode} rewrites results that change, which an append sink would insert twice: use mode: upsert (or leave mode out)`,
          ),
        );
      }
      const allowed = [...resultKey, "window_end"];
      const key = pg.key ?? [];
      if (
        resultKey.length > 0 &&
        (!resultKey.every((c) => key.includes(c)) || !key.every((c) => allowed.includes(c)))
      ) {
        found.push(
          issue(
            keyPath,
            `the aggregate's rows are identified by [${resultKey.join(", ")}]: set key: [${resultKey.join(", ")}] (or leave key out)`,
          ),
        );
      }
    }
    if (cdc) {
      const resultKey = cdcResultKey(cdc);
      if (pg.mode !== "upsert") {
        found.push(
          issue(
            ["sink", "postgres", "mode"],
            "cdc updates and deletes rows in place: use mode: upsert (or leave mode out)",
          ),
        );
      }
      if (pg.key && !sameSet(pg.key, resultKey)) {
        found.push(
          issue(
            keyPath,
            `a cdc table with scdType ${cdc.scdType} is keyed by [${resultKey.join(", ")}]: set key: [${resultKey.join(", ")}] (or leave key out)`,
          ),
        );
      }
    }
    return found;
  }),
];
