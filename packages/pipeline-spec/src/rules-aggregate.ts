// Rules for windows and aggregates: what makes a streaming result correct and its state bounded.
import { NUMERIC_TYPES, ORDERED_TYPES, fieldNameProblem } from "./contract";
import { SCD2_COLUMNS } from "./cdc-schema";
import { parseDuration } from "./duration";
import { issue, type TSpecIssue } from "./errors";
import { WINDOW_COLUMNS } from "./output-columns";
import { defineRule } from "./rule";
import { notAField } from "./rules-rows";

const RESERVED_OUTPUT = new Set<string>([...WINDOW_COLUMNS, ...SCD2_COLUMNS]);

export const aggregateRules = [
  defineRule(["aggregate", "cdc"], ({ aggregate, cdc }) =>
    aggregate && cdc
      ? [
          issue(
            ["cdc"],
            "aggregate and cdc cannot be combined: a pipeline either aggregates rows into windows or applies changes to entities; split it into two pipelines",
          ),
        ]
      : [],
  ),

  defineRule(["aggregate", "eventTime"], ({ aggregate, eventTime }) => {
    if (!aggregate) return [];
    const found: TSpecIssue[] = [];
    const mode = ["aggregate", "outputMode"];
    if (aggregate.window && !eventTime) {
      found.push(
        issue(
          ["aggregate", "window"],
          "windows group rows by event time: add eventTime: { column: event_time, watermarkDelay: 10m }",
        ),
      );
    }
    if (aggregate.outputMode === "append" && !aggregate.window) {
      found.push(
        issue(
          mode,
          "outputMode append writes a result once it is final, and only a window closed by the watermark is ever final: add a window (and eventTime), or use outputMode update",
        ),
      );
    }
    if (aggregate.outputMode === "complete" && aggregate.window) {
      found.push(
        issue(
          mode,
          "outputMode complete rewrites the whole result every batch, and a windowed result grows with every window while finished windows are evicted: use update (upsert changed windows) or append (write each window once)",
        ),
      );
    }
    if (!aggregate.window && aggregate.groupBy.length === 0) {
      found.push(
        issue(
          ["aggregate", "groupBy"],
          "an aggregate without a window is keyed by its groupBy columns: add groupBy: [merchant_id] or a window",
        ),
      );
    }
    if (!aggregate.window && parseDuration(aggregate.allowedLateness) > 0) {
      found.push(
        issue(
          ["aggregate", "allowedLateness"],
          `allowedLateness ${aggregate.allowedLateness} applies to windows, and this aggregate has none: remove it or add a window`,
        ),
      );
    }
    const sliding = aggregate.window?.sliding;
    if (sliding) {
      const [size, slide] = [parseDuration(sliding.size), parseDuration(sliding.slide)];
      if (slide > size) {
        found.push(
          issue(
            ["aggregate", "window", "sliding", "slide"],
            `slide ${sliding.slide} is longer than size ${sliding.size}, which would skip rows between windows: use a slide ≤ size (or a tumbling window)`,
          ),
        );
      } else if (size % slide !== 0) {
        found.push(
          issue(
            ["aggregate", "window", "sliding", "slide"],
            `size ${sliding.size} is not a multiple of slide ${sliding.slide}: pick a slide that divides the size, so every row falls in the same number of windows`,
          ),
        );
      }
    }
    return found;
  }),

  defineRule(["aggregate", "contract"], ({ aggregate, contract }) => {
    if (!aggregate) return [];
    const found: TSpecIssue[] = aggregate.groupBy.flatMap((column, i) => {
      const field = contract.fields[column];
      const path = ["aggregate", "groupBy", i];
      if (!field) return [issue(path, notAField(column, contract, "grouped by"))];
      if (field.type === "json") return [issue(path, `${column} is a json field; group by scalar fields`)];
      if (RESERVED_OUTPUT.has(column))
        return [
          issue(path, `${column} collides with a column Sluice adds to windowed results: rename the field`),
        ];
      return [];
    });
    for (const [name, measure] of Object.entries(aggregate.measures)) {
      const path = ["aggregate", "measures", name];
      const nameProblem = fieldNameProblem(name);
      if (nameProblem) found.push(issue(path, `measure name: ${nameProblem}`));
      else if (aggregate.groupBy.includes(name) || RESERVED_OUTPUT.has(name)) {
        found.push(
          issue(
            path,
            `measure ${name} collides with a ${aggregate.groupBy.includes(name) ? "groupBy" : "window"} column of the result: rename the measure`,
          ),
        );
      }
      if (measure.fn === "count_distinct" && !aggregate.window) {
        found.push(
          issue(
            path,
            `count_distinct keeps every distinct value it has seen; without a window that set is never evicted and grows forever: add a window`,
          ),
        );
      }
      if (measure.column === undefined) continue;
      const field = contract.fields[measure.column];
      if (!field) found.push(issue(path, notAField(measure.column, contract, "measured")));
      else if ((measure.fn === "sum" || measure.fn === "avg") && !NUMERIC_TYPES.has(field.type)) {
        found.push(
          issue(
            path,
            `${measure.fn}(${measure.column}) needs a numeric field, and ${measure.column} is ${field.type}: use an int, decimal or double field, or count()/count_distinct()`,
          ),
        );
      } else if ((measure.fn === "min" || measure.fn === "max") && !ORDERED_TYPES.has(field.type)) {
        found.push(
          issue(
            path,
            `${measure.fn}(${measure.column}) needs an ordered field (int, decimal, double, timestamp, string), and ${measure.column} is ${field.type}`,
          ),
        );
      } else if (measure.fn === "count_distinct" && field.type === "json") {
        found.push(
          issue(
            path,
            `count_distinct(${measure.column}) needs a scalar field, and ${measure.column} is json`,
          ),
        );
      }
    }
    return found;
  }),
];
