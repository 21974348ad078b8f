// Sink defaults that depend on the rest of the spec. Kept in one place so that the schema, the rules
// and the engine agree on, e.g., which key an append ledger with dedupe is written under.
import type { TAggregate } from "./aggregate-schema";
import type { TCdc } from "./cdc-schema";
import { issue, type TSpecIssue } from "./errors";
import { aggregateResultKey, cdcResultKey } from "./output-columns";
import type { TDedupe } from "./dedupe-schema";
import type { TOutputSection } from "./outputs-schema";
import type { TResolvedSink, TSinkMode, TSinkSection } from "./sink-schema";

/** An output after defaults that depend on the rest of the spec: its sink's mode and keys resolved. */
export type TResolvedOutput = Omit<TOutputSection, "sink"> & { sink: TResolvedSink };

export interface TSinkContext {
  sink: TSinkSection;
  dedupe?: TDedupe | undefined;
  aggregate?: TAggregate | undefined;
  cdc?: TCdc | undefined;
}

/** The key the pipeline's result is naturally identified by, if it has one. */
export function naturalKey(spec: Omit<TSinkContext, "sink">): string[] | undefined {
  if (spec.aggregate) {
    const key = aggregateResultKey(spec.aggregate);
    return key.length > 0 ? key : undefined;
  }
  if (spec.cdc) return cdcResultKey(spec.cdc);
  return spec.dedupe?.key;
}

/** Whether results are rewritten in place (so the sink must upsert). */
function updatesInPlace(spec: Omit<TSinkContext, "sink">): boolean {
  return spec.cdc !== undefined || (spec.aggregate !== undefined && spec.aggregate.outputMode !== "append");
}

/**
 * postgres: mode defaults to upsert when results update in place, else append; key defaults to the
 * natural key (an append ledger with dedupe is keyed by the dedupe key, i.e. the event id, so a replay
 * cannot insert twice). webhook: idempotencyKey defaults to the natural key.
 */
export function resolveSink(spec: TSinkContext): { sink?: TResolvedSink; issues: TSpecIssue[] } {
  const key = naturalKey(spec);
  if (spec.sink.postgres) {
    const pg = spec.sink.postgres;
    const mode: TSinkMode = pg.mode ?? (updatesInPlace(spec) ? "upsert" : "append");
    const resolvedKey = pg.key ?? key;
    if (mode === "upsert" && !resolvedKey) {
      return {
        issues: [
          issue(
            ["sink", "postgres", "key"],
            "mode upsert needs a key: add key: [<the columns that identify a row>], e.g. key: [event_id]",
          ),
        ],
      };
    }
    return { sink: { postgres: { ...pg, mode, ...(resolvedKey ? { key: resolvedKey } : {}) } }, issues: [] };
  }
  const hook = spec.sink.webhook;
  const idempotencyKey = hook.idempotencyKey ?? key;
  if (!idempotencyKey) {
    return {
      issues: [
        issue(
          ["sink", "webhook", "idempotencyKey"],
          "a webhook needs a stable event identity so a retried batch never calls twice: set idempotencyKey: [event_id] (or declare dedupe: { key: [event_id], ... })",
        ),
      ],
    };
  }
  return { sink: { webhook: { ...hook, idempotencyKey } }, issues: [] };
}

export interface TSinksContext {
  sink?: TSinkSection | undefined;
  outputs?: Record<string, TOutputSection> | undefined;
  dedupe?: TDedupe | undefined;
  aggregate?: TAggregate | undefined;
  cdc?: TCdc | undefined;
}

/**
 * The sink of a spec with one result, or each output's (keys and modes resolved per output, an
 * output's issues under outputs.<name>). Exactly one of sink and outputs must be declared.
 */
export function resolveSinks(spec: TSinksContext): {
  sink?: TResolvedSink;
  outputs?: Record<string, TResolvedOutput>;
  issues: TSpecIssue[];
} {
  if (spec.sink && spec.outputs)
    return {
      issues: [
        issue(
          ["sink"],
          "declare either sink (one result) or outputs (several, each with its own sink), not both: move sink under outputs.<name>",
        ),
      ],
    };
  if (spec.sink) return resolveSink({ ...spec, sink: spec.sink });
  if (!spec.outputs)
    return {
      issues: [
        issue(
          ["sink"],
          "required field is missing: declare where the result goes, e.g. sink: { postgres: { table: payments_ledger } } (or outputs, for several results)",
        ),
      ],
    };
  const outputs: Record<string, TResolvedOutput> = {};
  const issues: TSpecIssue[] = [];
  for (const [name, output] of Object.entries(spec.outputs)) {
    const resolved = resolveSink({ ...output, dedupe: spec.dedupe });
    if (resolved.sink) outputs[name] = { ...output, sink: resolved.sink };
    else issues.push(...resolved.issues.map((i) => ({ ...i, path: ["outputs", name, ...i.path] })));
  }
  return issues.length > 0 ? { issues } : { outputs, issues };
}
