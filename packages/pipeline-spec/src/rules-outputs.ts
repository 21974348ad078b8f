// Rules for several outputs: what stays the pipeline's (source, contract, dedupe, shared expectations
// and filter, dead letters) and what each output declares for itself (sink, aggregate or cdc, select).
// Each output is then checked by the same rules as a one-sink pipeline, on its view (output-views.ts),
// with its problems reported under outputs.<name>.
import { issue, type TPathSegment, type TSpecIssue } from "./errors";
import { joinedContract } from "./output-views";
import { outputNameProblem } from "./outputs-schema";
import { defineRule, type TRuleInput } from "./rule";
import type { TPipelineSpec } from "./spec-schema";

/** The sections an output declares for itself: a problem found in its view under one of them is the output's. */
const OUTPUT_SECTIONS = new Set<TPathSegment>(["expectations", "transform", "aggregate", "cdc", "sink"]);

export function outputIssuePath(name: string, path: TPathSegment[]): TPathSegment[] {
  return path.length > 0 && OUTPUT_SECTIONS.has(path[0]!) ? ["outputs", name, ...path] : path;
}

/** Each output as the rules see a one-sink pipeline: the joined row, its own sections, its watermark delay. */
export function outputRuleInputs(spec: TPipelineSpec): { name: string; input: TRuleInput }[] {
  const contract = joinedContract(spec);
  return Object.entries(spec.outputs ?? {}).map(([name, o]) => ({
    name,
    input: {
      ...(spec as TRuleInput),
      contract,
      expectations: o.expectations,
      transform: o.transform,
      aggregate: o.aggregate,
      cdc: o.cdc,
      sink: o.sink,
      eventTime:
        spec.eventTime && o.watermarkDelay !== undefined
          ? { ...spec.eventTime, watermarkDelay: o.watermarkDelay }
          : spec.eventTime,
    },
  }));
}

const MOVE = {
  aggregate: "an aggregate belongs to the output it writes: move aggregate under outputs.<name>",
  cdc: "cdc belongs to the output it writes: move cdc under outputs.<name>",
} as const;

export const outputsRules = [
  defineRule(["outputs"], ({ outputs }) =>
    Object.keys(outputs ?? {}).flatMap((name) => {
      const problem = outputNameProblem(name);
      return problem ? [issue(["outputs", name], problem)] : [];
    }),
  ),
  defineRule(["outputs", "aggregate", "cdc", "transform"], ({ outputs, aggregate, cdc, transform }) => {
    if (!outputs) return [];
    const found: TSpecIssue[] = [];
    if (aggregate) found.push(issue(["aggregate"], `with outputs, ${MOVE.aggregate}`));
    if (cdc) found.push(issue(["cdc"], `with outputs, ${MOVE.cdc}`));
    if (transform?.select)
      found.push(
        issue(
          ["transform", "select"],
          "with outputs, each output selects its own columns: move select under outputs.<name>.transform (transform.filter stays shared)",
        ),
      );
    return found;
  }),
  defineRule(["outputs", "eventTime"], ({ outputs, eventTime }) =>
    Object.entries(outputs ?? {}).flatMap(([name, o]) =>
      o.watermarkDelay !== undefined && !eventTime
        ? [
            issue(
              ["outputs", name, "watermarkDelay"],
              "an output's watermark follows the source's event time: declare eventTime, e.g. eventTime: { column: event_time, watermarkDelay: 1m }",
            ),
          ]
        : [],
    ),
  ),
  defineRule(["outputs"], ({ outputs }) => {
    const owner = new Map<string, string>();
    return Object.entries(outputs ?? {}).flatMap(([name, o]) => {
      const table = o.sink.postgres?.table;
      if (!table) return [];
      const first = owner.get(table);
      if (first === undefined) return (owner.set(table, name), []);
      return [
        issue(
          ["outputs", name, "sink", "postgres", "table"],
          `outputs ${first} and ${name} both write ${table}: each output writes a table of its own`,
        ),
      ];
    });
  }),
  defineRule(["outputs"], ({ outputs }) => {
    const hooks = Object.entries(outputs ?? {}).filter(([, o]) => o.sink.webhook);
    return hooks
      .slice(1)
      .map(([name]) =>
        issue(
          ["outputs", name, "sink", "webhook"],
          `outputs ${hooks[0]![0]} and ${name} are both webhooks: a pipeline has at most one webhook output (its delivery ledger and re-queued deliveries are kept per pipeline); send the other from a pipeline of its own`,
        ),
      );
  }),
];
