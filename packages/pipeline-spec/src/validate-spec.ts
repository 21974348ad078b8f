// validateSpec: structure, defaults, cross-field rules and expression type-checks, reporting every
// problem at once. Each top-level section is parsed on its own so that an error in one section never
// hides the errors in another.
import { z } from "zod";
import { aggregateRules } from "./rules-aggregate";
import { cdcRules } from "./rules-cdc";
import { celEnvironmentFor } from "./cel-environment";
import { formatPath, issue, type TPathSegment, type TSpecError, type TSpecIssue } from "./errors";
import { expressionProblem } from "./expressions";
import { joinedContract } from "./output-views";
import { resolveSinks } from "./resolve-sink";
import { joinRules } from "./rules-join";
import { parallelismRules } from "./rules-parallelism";
import { outputRuleInputs, outputsRules, outputIssuePath } from "./rules-outputs";
import { runRules, type TRuleInput } from "./rule";
import { expectationNameRules, rowRules, selectRules } from "./rules-rows";
import { sinkRules } from "./rules-sink";
import { findSecretsInSpec } from "./secrets";
import { rawSpecExpressions } from "./spec-expressions";
import { ZFieldSpec, fieldNameProblem, type TContract, type TFieldSpec } from "./contract";
import { SPEC_SECTIONS, ZPipelineSpecShape, type TPipelineSpec } from "./spec-schema";
import { fromZodIssues, schemaKeys } from "./zod-issues";

export type TValidationResult = { ok: true; spec: TPipelineSpec } | { ok: false; errors: TSpecError[] };

/** Rules about the rows as read (the source's contract). */
const SOURCE_RULES = rowRules;
/** Rules about the result (after a join: its fields too), run for the pipeline's sink or per output. */
const RESULT_RULES = [...selectRules, ...aggregateRules, ...cdcRules, ...sinkRules];
const PIPELINE_RULES = [...outputsRules, ...joinRules, ...parallelismRules];
const KNOWN_KEYS = schemaKeys(ZPipelineSpecShape);
type TSectionKey = keyof typeof SPEC_SECTIONS;
const SECTION_KEYS = Object.keys(SPEC_SECTIONS) as TSectionKey[];

/** Validates a spec object (parsed YAML/JSON). On success the spec is normalized: defaults filled in. */
export function validateSpec(input: unknown): TValidationResult {
  const { spec, issues } = checkSpec(input);
  if (spec) return { ok: true, spec };
  return { ok: false, errors: issues.map((i) => ({ path: formatPath(i.path), message: i.message })) };
}

/** Like validateSpec, with the issues' paths as segments (parseSpec locates them in the YAML text). */
export function checkSpec(input: unknown): { spec?: TPipelineSpec; issues: TSpecIssue[] } {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return {
      issues: [
        issue([], "a pipeline spec must be a mapping with at least name, owner, source, contract and sink"),
      ],
    };
  }
  const raw = input as Record<string, unknown>;
  const issues = findSecretsInSpec(raw);
  const secretPaths = new Set(issues.map((i) => formatPath(i.path)));
  const notSecret = (i: TSpecIssue) => !secretPaths.has(formatPath(i.path));

  const parts: Partial<Record<TSectionKey, unknown>> = {};
  const failed = new Set<string>();
  for (const key of Object.keys(raw)) {
    if (!(key in SPEC_SECTIONS))
      issues.push(...fromZodIssues([unknownKey(key)], [], KNOWN_KEYS).filter(notSecret));
  }
  for (const key of SECTION_KEYS) {
    const result = (SPEC_SECTIONS[key] as z.ZodType).safeParse(raw[key], { reportInput: true });
    if (result.success) parts[key] = result.data;
    else {
      failed.add(key);
      issues.push(...fromZodIssues(result.error.issues, [key], KNOWN_KEYS).filter(notSecret));
    }
  }

  const input_ = parts as Partial<TRuleInput> & Pick<Partial<TPipelineSpec>, "outputs">;
  if (!["sink", "outputs", "dedupe", "aggregate", "cdc"].some((k) => failed.has(k))) {
    const resolved = resolveSinks(parts as Parameters<typeof resolveSinks>[0]);
    if (resolved.sink) input_.sink = resolved.sink;
    else if (resolved.outputs) input_.outputs = resolved.outputs;
    else failed.add("sink");
    issues.push(...resolved.issues);
  }
  // With outputs there is no top-level sink: the sink rules run per output below.
  const available = (key: string) => !failed.has(key) && (key !== "sink" || input_.sink !== undefined);
  issues.push(...runRules(SOURCE_RULES, input_, available));
  issues.push(...runRules(PIPELINE_RULES, input_, available));
  // The result's rules see the rows after the join; until the join section parses, its fields are unknown.
  const joined =
    input_.join && !failed.has("contract")
      ? { ...input_, contract: joinedContract(input_ as TPipelineSpec) }
      : input_;
  if (!failed.has("join")) issues.push(...runRules(RESULT_RULES, joined, available));
  if (input_.outputs && !failed.has("contract") && !failed.has("join"))
    for (const { name, input } of outputRuleInputs(input_ as TPipelineSpec))
      issues.push(
        ...runRules([...RESULT_RULES, ...expectationNameRules], input, (key) => !failed.has(key)).map(
          (i) => ({
            ...i,
            path: outputIssuePath(name, i.path),
          }),
        ),
      );

  const contract = failed.has("contract") ? salvageContract(raw.contract) : input_.contract;
  issues.push(...expressionIssues(raw, contract, failed.has("join") ? "failed" : input_.join));

  const unique = dedupeIssues(issues);
  return unique.length > 0 ? { issues: unique } : { spec: input_ as TPipelineSpec, issues: [] };
}

/**
 * Type-checks every expression against the fields it can see: the pipeline's expectations and filter
 * the source's contract (they run before the join), aggregates, CDC and every output's expressions
 * the joined row, a dimension's delete condition the dimension's contract.
 */
function expressionIssues(
  raw: Record<string, unknown>,
  contract: Pick<TContract, "fields"> | undefined,
  /** "failed": the join section is invalid, so what the joined row holds is unknown (not checked). */
  join: TPipelineSpec["join"] | "failed",
): TSpecIssue[] {
  const found: TSpecIssue[] = [];
  const check = (
    exprs: ReturnType<typeof rawSpecExpressions>,
    env: ReturnType<typeof celEnvironmentFor>,
    prefix: TPathSegment[] = [],
  ) => {
    for (const e of exprs) {
      const problem = expressionProblem(e.expr, env, e.kind);
      if (problem) found.push(issue([...prefix, ...e.path], problem));
    }
  };
  if (contract) {
    const source = celEnvironmentFor(contract);
    const joined =
      join && join !== "failed"
        ? celEnvironmentFor(joinedContract({ contract: contract as TContract, join }))
        : source;
    const all = rawSpecExpressions(raw);
    const beforeJoin = (e: { kind: string }) => e.kind === "filter" || e.kind === "expectation";
    check(all.filter(beforeJoin), source);
    if (join !== "failed")
      check(
        all.filter((e) => !beforeJoin(e)),
        joined,
      );
    const outputs = raw.outputs;
    if (join !== "failed" && typeof outputs === "object" && outputs !== null && !Array.isArray(outputs))
      for (const [name, output] of Object.entries(outputs))
        if (typeof output === "object" && output !== null && !Array.isArray(output))
          check(rawSpecExpressions(output as Record<string, unknown>), joined, ["outputs", name]);
  }
  if (join && join !== "failed" && "deleteWhen" in join.dimension && join.dimension.deleteWhen !== undefined)
    check(
      [
        {
          path: ["join", "dimension", "deleteWhen"],
          expr: join.dimension.deleteWhen,
          kind: "delete condition",
        },
      ],
      celEnvironmentFor(join.dimension.contract),
    );
  return found;
}

/**
 * The usable part of an invalid contract, so expressions are still checked: valid fields keep their
 * type, fields with an invalid type become dyn (no false "unknown field"), invalid names are left out.
 */
function salvageContract(raw: unknown): Pick<TContract, "fields"> | undefined {
  const fields = (raw as { fields?: unknown } | null | undefined)?.fields;
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) return undefined;
  const salvaged: Record<string, TFieldSpec> = {};
  for (const [name, spec] of Object.entries(fields)) {
    if (fieldNameProblem(name)) continue;
    const parsed = ZFieldSpec.safeParse(spec);
    salvaged[name] = parsed.success ? parsed.data : { type: "json", optional: true };
  }
  return { fields: salvaged };
}

function unknownKey(key: string): z.core.$ZodIssue {
  return { code: "unrecognized_keys", keys: [key], path: [], message: "" };
}

function dedupeIssues(issues: TSpecIssue[]): TSpecIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const id = `${formatPath(i.path)}\n${i.message}`;
    return seen.has(id) ? false : (seen.add(id), true);
  });
}

/** For tRPC inputs: the full validation (rules and expressions), as a zod schema producing TPipelineSpec. */
export const ZValidPipelineSpec = z.unknown().transform((value, ctx): TPipelineSpec => {
  const { spec, issues } = checkSpec(value);
  if (spec) return spec;
  for (const i of issues) ctx.issues.push({ code: "custom", input: value, path: i.path, message: i.message });
  return z.NEVER;
});
