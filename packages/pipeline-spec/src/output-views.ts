// Every output of a pipeline as a spec with one result, so each output's result columns, sink rules,
// expressions, timing and state compatibility are decided by the same code as a one-sink pipeline's.
// A spec with a top-level sink has one output, named "". An output's view has the rows it receives:
// the contract's fields plus the join's (null when the dimension is missing), its own expectations,
// filter and select, aggregate or cdc, sink, and the watermark delay it sets.
import type { TContract, TFieldSpec } from "./contract";
import type { TJoin } from "./join-schema";
import type { TPipelineSpec, TSingleOutputSpec } from "./spec-schema";

export interface TOutputView {
  /** The output's name; "" for a spec with a top-level sink (its only output). */
  name: string;
  /** The output as a spec with one result (the join already applied: its fields are in the contract). */
  spec: TSingleOutputSpec;
}

/** The fields a joined row adds: each `join.fields` entry, typed like its dimension field, always optional. */
export function joinFields(join: TJoin): Record<string, TFieldSpec> {
  const dim = join.dimension.contract.fields;
  return Object.fromEntries(
    Object.entries(join.fields).flatMap(([name, from]) => {
      const field = dim[from];
      return field ? [[name, { type: field.type, optional: true }]] : [];
    }),
  );
}

/** The contract of the rows after the join: the source's fields plus the join's. */
export function joinedContract(spec: Pick<TPipelineSpec, "contract" | "join">): TContract {
  if (!spec.join) return spec.contract;
  return { ...spec.contract, fields: { ...spec.contract.fields, ...joinFields(spec.join) } };
}

export function outputViews(spec: TPipelineSpec): TOutputView[] {
  const { outputs, join: _join, ...rest } = spec;
  const contract = joinedContract(spec);
  if (!outputs) return [{ name: "", spec: { ...rest, contract, sink: spec.sink! } }];
  return Object.keys(outputs)
    .sort()
    .map((name) => {
      const o = outputs[name]!;
      const { transform: _transform, aggregate: _aggregate, cdc: _cdc, ...shared } = rest;
      const view: TSingleOutputSpec = {
        ...shared,
        contract,
        ...(o.description !== undefined ? { description: o.description } : {}),
        expectations: o.expectations,
        ...(o.transform ? { transform: o.transform } : {}),
        ...(o.aggregate ? { aggregate: o.aggregate } : {}),
        ...(o.cdc ? { cdc: o.cdc } : {}),
        ...(spec.eventTime
          ? {
              eventTime: {
                ...spec.eventTime,
                watermarkDelay: o.watermarkDelay ?? spec.eventTime.watermarkDelay,
              },
            }
          : {}),
        sink: o.sink,
      };
      return { name, spec: view };
    });
}

/** The postgres tables a pipeline writes, one per output that has a postgres sink. */
export function sinkTables(spec: TPipelineSpec): { output: string; table: string }[] {
  return outputViews(spec).flatMap((v) =>
    v.spec.sink.postgres ? [{ output: v.name, table: v.spec.sink.postgres.table }] : [],
  );
}
