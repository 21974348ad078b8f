// Rules for CDC apply-changes: the key and sequence must identify and order every change.
import { SCD2_COLUMNS } from "./cdc-schema";
import { issue, type TSpecIssue } from "./errors";
import { defineRule } from "./rule";
import { notAField } from "./rules-rows";
import type { TFieldType } from "./contract";

const SEQUENCE_TYPES: ReadonlySet<TFieldType> = new Set(["int", "decimal", "double", "timestamp"]);

export const cdcRules = [
  defineRule(["cdc", "contract"], ({ cdc, contract }) => {
    if (!cdc) return [];
    const found: TSpecIssue[] = cdc.key.flatMap((column, i) => {
      const field = contract.fields[column];
      const path = ["cdc", "key", i];
      if (!field) return [issue(path, notAField(column, contract, "a cdc key"))];
      if (field.optional)
        return [
          issue(
            path,
            `${column} is optional; every change must name its entity: declare the key field required`,
          ),
        ];
      if (field.type === "json")
        return [issue(path, `${column} is a json field; cdc keys must be scalar fields`)];
      return [];
    });
    const sequence = contract.fields[cdc.sequenceBy];
    if (!sequence)
      found.push(issue(["cdc", "sequenceBy"], notAField(cdc.sequenceBy, contract, "the sequence")));
    else if (!SEQUENCE_TYPES.has(sequence.type)) {
      found.push(
        issue(
          ["cdc", "sequenceBy"],
          `${cdc.sequenceBy} is ${sequence.type}; the sequence must be an int, decimal, double or timestamp field so that changes can be ordered`,
        ),
      );
    } else if (sequence.optional) {
      found.push(
        issue(
          ["cdc", "sequenceBy"],
          `${cdc.sequenceBy} is optional; every change needs a sequence: declare it required`,
        ),
      );
    }
    const opColumn = cdc.operation?.column;
    if (opColumn !== undefined && !contract.fields[opColumn]) {
      found.push(
        issue(["cdc", "operation", "column"], notAField(opColumn, contract, "the operation column")),
      );
    }
    if (cdc.scdType === 2) {
      for (const reserved of SCD2_COLUMNS) {
        if (contract.fields[reserved]) {
          found.push(
            issue(
              ["contract", "fields", reserved],
              `${reserved} collides with a column SCD2 history adds: rename the field`,
            ),
          );
        }
      }
    }
    return found;
  }),

  defineRule(["cdc", "eventTime"], ({ cdc, eventTime }) =>
    cdc?.stateEviction && !eventTime
      ? [
          issue(
            ["cdc", "stateEviction"],
            "stateEviction: watermark evicts applied changes once the watermark passes their event time: declare eventTime, e.g. eventTime: { column: changed_at, watermarkDelay: 5m }",
          ),
        ]
      : [],
  ),

  defineRule(["cdc", "sink"], ({ cdc, sink }) =>
    cdc && sink.webhook
      ? [
          issue(
            ["sink"],
            "cdc applies changes to a table: use sink: { postgres: { table: ... } }; a webhook cannot hold entity state",
          ),
        ]
      : [],
  ),
];
