// Rules for the join: the row's event time says "as of when", the dimension's key, event time and
// sequence must be fields of its contract, `on` must match the dimension key field by field with the
// same types, and the enriched fields must not shadow the row's own. A pipeline dimension is checked
// here as far as the spec alone tells (its key fields declared, not this pipeline itself); its table,
// its team and its history are checked at registration (engine join/dimension-pipeline.ts).
import { ORDERED_TYPES, fieldNameProblem, type TContract } from "./contract";
import { issue, type TPathSegment, type TSpecIssue } from "./errors";
import { isPipelineDimension, type TJoin } from "./join-schema";
import { defineRule } from "./rule";
import { notAField } from "./rules-rows";

const dimNotAField = (column: string, contract: Pick<TContract, "fields">, role: string) =>
  notAField(column, contract, role).replace(
    "add it to contract.fields",
    "add it to join.dimension.contract.fields",
  );

function dimensionIssues(join: TJoin, sourceTopic: string | undefined, name: string): TSpecIssue[] {
  const dim = join.dimension;
  const at = (...p: TPathSegment[]) => ["join", "dimension", ...p];
  const fields = dim.contract.fields;
  const found: TSpecIssue[] = [];
  const keyIssues = () =>
    dim.key.forEach((column, i) => {
      const field = fields[column];
      if (!field) found.push(issue(at("key", i), dimNotAField(column, dim.contract, "a dimension key")));
      else if (field.optional || field.type === "json")
        found.push(
          issue(at("key", i), `${column} must be a required scalar field to identify a dimension entity`),
        );
    });
  if (isPipelineDimension(dim)) {
    if (dim.pipeline === name)
      found.push(
        issue(
          at("pipeline"),
          `${name} cannot be its own dimension: name the pipeline whose SCD2 history it joins (e.g. customer-status)`,
        ),
      );
    keyIssues();
    return found;
  }
  if (sourceTopic !== undefined && dim.kafka.topic === sourceTopic)
    found.push(
      issue(
        at("kafka", "topic"),
        `the dimension is read from its own changelog topic; ${sourceTopic} is the pipeline's source: use the dimension's topic (e.g. customer-changes)`,
      ),
    );
  keyIssues();
  const time = fields[dim.eventTime.column];
  if (!time)
    found.push(
      issue(at("eventTime", "column"), dimNotAField(dim.eventTime.column, dim.contract, "the event time")),
    );
  else if (time.type !== "timestamp" || time.optional)
    found.push(
      issue(
        at("eventTime", "column"),
        `${dim.eventTime.column} must be a required timestamp field: a version is valid from the time its change happened`,
      ),
    );
  if (dim.sequenceBy !== undefined) {
    const seq = fields[dim.sequenceBy];
    if (!seq) found.push(issue(at("sequenceBy"), dimNotAField(dim.sequenceBy, dim.contract, "the sequence")));
    else if (!ORDERED_TYPES.has(seq.type) || seq.optional)
      found.push(
        issue(
          at("sequenceBy"),
          `${dim.sequenceBy} must be a required int, decimal, double, timestamp or string field`,
        ),
      );
  }
  return found;
}

function onIssues(join: TJoin, contract: Pick<TContract, "fields">): TSpecIssue[] {
  const dim = join.dimension;
  const found: TSpecIssue[] = [];
  const mapped = Object.entries(join.on);
  for (const [column, dimColumn] of mapped) {
    const path = ["join", "on", column];
    const field = contract.fields[column];
    const dimField = dim.contract.fields[dimColumn];
    if (!field) found.push(issue(path, notAField(column, contract, "joined on")));
    else if (!dim.key.includes(dimColumn))
      found.push(
        issue(
          path,
          `${JSON.stringify(dimColumn)} is not part of join.dimension.key [${dim.key.join(", ")}]: map each row field to a dimension key field`,
        ),
      );
    else if (field.type !== dimField?.type)
      found.push(
        issue(
          path,
          `${column} is ${field.type} and the dimension's ${dimColumn} is ${dimField?.type}: a join compares values of the same type`,
        ),
      );
  }
  const covered = new Set(mapped.map(([, d]) => d));
  const missing = dim.key.filter((k) => !covered.has(k));
  if (missing.length > 0)
    found.push(
      issue(
        ["join", "on"],
        `map every field of join.dimension.key: ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not mapped (e.g. on: { ${missing[0]}: ${missing[0]} })`,
      ),
    );
  return found;
}

function fieldsIssues(join: TJoin, contract: Pick<TContract, "fields">): TSpecIssue[] {
  return Object.entries(join.fields).flatMap(([name, from]) => {
    const path = ["join", "fields", name];
    const problem = fieldNameProblem(name);
    if (problem) return [issue(path, problem)];
    if (contract.fields[name])
      return [
        issue(
          path,
          `${name} is already a field of the row: name the enriched field differently (e.g. customer_${name})`,
        ),
      ];
    if (!join.dimension.contract.fields[from])
      return [issue(path, dimNotAField(from, join.dimension.contract, "an enriched field"))];
    return [];
  });
}

export const joinRules = [
  defineRule(
    ["join", "contract", "eventTime", "source", "name"],
    ({ join, contract, eventTime, source, name }) => {
      if (!join) return [];
      const found = [
        ...dimensionIssues(join, source?.kafka.topic, name),
        ...onIssues(join, contract),
        ...fieldsIssues(join, contract),
      ];
      if (!eventTime)
        found.push(
          issue(
            ["join"],
            "a join finds the dimension version valid at each row's event time: declare eventTime, e.g. eventTime: { column: event_time, watermarkDelay: 1m }",
          ),
        );
      return found;
    },
  ),
];
