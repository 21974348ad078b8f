// validateSpec: structure, defaults, cross-field rules and expression type-checks, reporting every
// problem at once. Each top-level section is parsed on its own so that an error in one section never
// hides the errors in another.
import { z } from "zod";
import { aggregateRules } from "./rules-aggregate";
import { cdcRules } from "./rules-cdc";
import { celEnvironmentFor } from "./cel-environment";
import { formatPath, issue, type TSpecError, type TSpecIssue } from "./errors";
import { expressionProblem } from "./expressions";
import { resolveSink } from "./resolve-sink";
import { runRules, type TRuleInput } from "./rule";
import { rowRules } from "./rules-rows";
import { sinkRules } from "./rules-sink";
import { findSecretsInSpec } from "./secrets";
import { rawSpecExpressions } from "./spec-expressions";
import { ZFieldSpec, fieldNameProblem, type TContract, type TFieldSpec } from "./contract";
import { SPEC_SECTIONS, ZPipelineSpecShape, type TPipelineSpec } from "./spec-schema";
import { fromZodIssues, schemaKeys } from "./zod-issues";

export type TValidationResult = { ok: true; spec: TPipelineSpec } | { ok: false; errors: TSpecError[] };

const RULES = [...rowRules, ...aggregateRules, ...cdcRules, ...sinkRules];
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

  const input_ = parts as Partial<TRuleInput>;
  if (!["sink", "dedupe", "aggregate", "cdc"].some((k) => failed.has(k))) {
    const resolved = resolveSink(parts as Parameters<typeof resolveSink>[0]);
    if (resolved.sink) input_.sink = resolved.sink;
    else {
      failed.add("sink");
      issues.push(...resolved.issues);
    }
  }
  issues.push(...runRules(RULES, input_, (key) => !failed.has(key)));

  const contract = failed.has("contract") ? salvageContract(raw.contract) : input_.contract;
  if (contract) {
    const env = celEnvironmentFor(contract);
    for (const e of rawSpecExpressions(raw)) {
      const problem = expressionProblem(e.expr, env, e.kind);
      if (problem) issues.push(issue(e.path, problem));
    }
  }

  const unique = dedupeIssues(issues);
  return unique.length > 0 ? { issues: unique } : { spec: input_ as TPipelineSpec, issues: [] };
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
