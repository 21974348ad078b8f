import { describe, expect, it } from "vitest";
import { validateSpec, type TSpecError } from "./index";
import { cdcSpec, joinedSpec, ledgerSpec, settlementsSpec, splitSpec, type TLooseSpec } from "./test-specs";

function withParallelism(spec: TLooseSpec, parallelism: unknown): TLooseSpec {
  const source = spec.source as { kafka: Record<string, unknown> };
  return { ...spec, source: { kafka: { ...source.kafka, parallelism } } };
}

function errorsOf(spec: TLooseSpec): TSpecError[] {
  const result = validateSpec(spec);
  return result.ok ? [] : result.errors;
}

describe("source.kafka.parallelism: partition groups", () => {
  it("lets a ledger, CDC, and windows in update or append mode read their partitions in groups; leaves the field out by default", () => {
    expect(errorsOf(withParallelism(settlementsSpec(), 3))).toEqual([]);
    expect(errorsOf(withParallelism(cdcSpec(), 3))).toEqual([]);
    const append = withParallelism(settlementsSpec(), 2);
    (append.aggregate as Record<string, unknown>).outputMode = "append";
    expect(errorsOf(append)).toEqual([]);
    const result = validateSpec(withParallelism(ledgerSpec(), 3));
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(result.spec.source.kafka.parallelism).toBe(3);
    const plain = validateSpec(ledgerSpec());
    expect(plain.ok && plain.spec.source.kafka.parallelism).toBeUndefined();
  });

  it("refuses what two groups cannot yet update side by side, naming the section and how to run it", () => {
    const at = "source.kafka.parallelism";
    const complete = withParallelism(settlementsSpec(), 2);
    const aggregate = complete.aggregate as Record<string, unknown>;
    delete aggregate.window;
    aggregate.outputMode = "complete";
    expect(errorsOf(complete)).toEqual([
      {
        path: at,
        message: expect.stringMatching(
          /parallelism 2 is not supported with outputMode complete .*Leave parallelism out/,
        ),
      },
    ]);
    expect(errorsOf(withParallelism(joinedSpec(), 2))).toEqual([
      { path: at, message: expect.stringMatching(/with a join/) },
    ]);
    expect(errorsOf(withParallelism(splitSpec(), 2))).toEqual([
      { path: at, message: expect.stringMatching(/with several outputs/) },
    ]);
    const webhook = withParallelism(ledgerSpec(), 2);
    webhook.sink = {
      webhook: { urlFromEnv: "HOOK_URL", idempotencyKey: ["event_id"] },
    };
    expect(errorsOf(webhook)).toEqual([{ path: at, message: expect.stringMatching(/with a webhook sink/) }]);
    // One group is today's single runner: allowed with anything.
    expect(errorsOf(withParallelism(settlementsSpec(), 1))).toEqual([]);
  });

  it("takes a whole number from 1 to 64", () => {
    for (const bad of [0, 65, 1.5, "2"])
      expect(errorsOf(withParallelism(ledgerSpec(), bad)).map((e) => e.path)).toEqual([
        "source.kafka.parallelism",
      ]);
  });
});
