// Cross-field rules: each declares the sections it reads, and runs only when those parsed, so a broken
// section never hides the errors of the others and a rule never reads a half-valid value.
import type { TSpecIssue } from "./errors";
import type { TResolvedSink } from "./sink-schema";
import type { TSpecSections } from "./spec-schema";

/** The sections rules read: the sink with its context-dependent defaults already resolved. */
export type TRuleInput = Omit<TSpecSections, "sink"> & { sink: TResolvedSink };

export interface TRule<K extends keyof TRuleInput = keyof TRuleInput> {
  needs: readonly K[];
  check(spec: Pick<TRuleInput, K>): TSpecIssue[];
}

export function defineRule<K extends keyof TRuleInput>(
  needs: readonly K[],
  check: (spec: Pick<TRuleInput, K>) => TSpecIssue[],
): TRule {
  return { needs, check } as unknown as TRule;
}

/** Runs the rules whose sections are all available (parsed, or an optional section left out). */
export function runRules(
  rules: readonly TRule[],
  parts: Partial<TRuleInput>,
  available: (key: keyof TRuleInput) => boolean,
): TSpecIssue[] {
  return rules.flatMap((rule) => (rule.needs.every(available) ? rule.check(parts as TRuleInput) : []));
}
