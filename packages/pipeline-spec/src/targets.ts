// A pipeline's service targets: what on-call holds its signals against (the console's freshness and
// correctness panels, the fleet's "lagging", and later the alert rules). Optional in the spec; a spec
// without them gets the defaults below, which fit a pipeline with a trigger of seconds.
import { z } from "zod";
import { parseDuration } from "./duration";
import { ZPositiveDuration } from "./spec-primitives";

export const DEFAULT_TARGETS = {
  /** The newest committed row may be at most this old (by its Kafka append time) while input waits. */
  freshness: "5m",
  /** Expectation violations per input row above this are a correctness problem. */
  violationRate: 0.01,
} as const;

export const ZTargets = z.strictObject({
  freshness: ZPositiveDuration.optional(),
  violationRate: z
    .number({ error: "violationRate is a share of input rows between 0 and 1, such as 0.01 for 1%" })
    .min(0, { error: "violationRate is a share between 0 and 1 (0.01 is 1%)" })
    .max(1, { error: "violationRate is a share between 0 and 1 (0.01 is 1%)" })
    .optional(),
});
export type TTargets = z.output<typeof ZTargets>;

export interface TResolvedTargets {
  freshness: string;
  freshnessMs: number;
  violationRate: number;
}

/** The spec's targets with defaults filled in. */
export function resolveTargets(targets: TTargets | undefined): TResolvedTargets {
  const freshness = targets?.freshness ?? DEFAULT_TARGETS.freshness;
  return {
    freshness,
    freshnessMs: parseDuration(freshness),
    violationRate: targets?.violationRate ?? DEFAULT_TARGETS.violationRate,
  };
}
