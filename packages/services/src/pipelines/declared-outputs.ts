// The outputs a stored spec declares (`outputs:` keyed by name, docs/pipeline-spec.md), read leniently
// from pipeline_versions.spec: what a per-output alert rule may name, and which outputs it is judged on.
import { z } from "zod";

const ZOutputs = z.object({ outputs: z.record(z.string(), z.unknown()).optional() });

/** The output names, sorted; none for a spec with one sink. */
export function declaredOutputs(spec: unknown): string[] {
  const parsed = ZOutputs.safeParse(spec);
  return parsed.success ? Object.keys(parsed.data.outputs ?? {}).sort() : [];
}
