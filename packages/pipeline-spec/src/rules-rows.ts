// Rules about the row before aggregation: event time, dedupe, expectations, select.
import { issue, type TSpecIssue } from "./errors";
import { defineRule } from "./rule";
import { IDENTIFIER_PATTERN } from "./identifier";
import type { TContract } from "./contract";

/** "merchant_idd is not a contract field" with the fields to choose from. */
export function notAField(column: string, contract: Pick<TContract, "fields">, role: string): string {
  const fields = Object.keys(contract.fields).sort().join(", ");
  return `${JSON.stringify(column)} is not a contract field, so it cannot be ${role}: use one of ${fields}, or add it to contract.fields`;
}

/** Expectation names: identifiers, unique in their list (the pipeline's, or one output's). */
export const expectationNameRules = [
  defineRule(["expectations"], ({ expectations }) =>
    expectations.flatMap((e, i) => {
      const path = ["expectations", i, "name"];
      if (!IDENTIFIER_PATTERN.test(e.name)) {
        return [
          issue(
            path,
            `${JSON.stringify(e.name)} is not a valid expectation name: use lowercase letters, digits and _, e.g. positive_amount (it labels metrics and dead letters)`,
          ),
        ];
      }
      const first = expectations.findIndex((other) => other.name === e.name);
      return first < i
        ? [
            issue(
              path,
              `expectation ${JSON.stringify(e.name)} is already declared at expectations[${first}]: names must be unique`,
            ),
          ]
        : [];
    }),
  ),
];

export const rowRules = [
  defineRule(["contract", "eventTime"], ({ contract, eventTime }) => {
    if (!eventTime) return [];
    const path = ["eventTime", "column"];
    const field = contract.fields[eventTime.column];
    if (!field) return [issue(path, notAField(eventTime.column, contract, "the event time"))];
    if (field.type !== "timestamp") {
      return [
        issue(
          path,
          `${eventTime.column} is a ${field.type} field; event time must be a timestamp field: declare ${eventTime.column}: timestamp or pick a timestamp field`,
        ),
      ];
    }
    if (field.optional) {
      return [
        issue(
          path,
          `${eventTime.column} is optional, but every row needs an event time: declare it required (${eventTime.column}: timestamp, without ?)`,
        ),
      ];
    }
    return [];
  }),

  defineRule(["contract", "dedupe", "eventTime"], ({ contract, dedupe, eventTime }) => {
    if (!dedupe) return [];
    const found: TSpecIssue[] = dedupe.key.flatMap((column, i) => {
      const field = contract.fields[column];
      const path = ["dedupe", "key", i];
      if (!field) return [issue(path, notAField(column, contract, "a dedupe key"))];
      if (field.optional)
        return [
          issue(
            path,
            `${column} is optional; a dedupe key must be present on every row: declare it required or pick another key`,
          ),
        ];
      if (field.type === "json")
        return [issue(path, `${column} is a json field; dedupe keys must be scalar fields such as event_id`)];
      return [];
    });
    if (dedupe.within === "watermark" && !eventTime) {
      found.push(
        issue(
          ["dedupe", "within"],
          "within: watermark needs a watermark: add eventTime: { column: event_time, watermarkDelay: 10m }, or use a duration such as within: 24h",
        ),
      );
    }
    return found;
  }),

  ...expectationNameRules,
];

/** transform.select names columns of the rows the sink receives: after a join, the joined ones too. */
export const selectRules = [
  defineRule(["contract", "transform", "aggregate", "cdc"], ({ contract, transform, aggregate, cdc }) => {
    if (!transform?.select) return [];
    if (aggregate || cdc) {
      const by = aggregate
        ? "aggregate (its output is groupBy, window and measures)"
        : "cdc (it writes the whole entity)";
      return [
        issue(["transform", "select"], `select cannot be combined with ${by}: remove transform.select`),
      ];
    }
    return transform.select.flatMap((column, i) =>
      contract.fields[column]
        ? []
        : [issue(["transform", "select", i], notAField(column, contract, "selected"))],
    );
  }),
];
