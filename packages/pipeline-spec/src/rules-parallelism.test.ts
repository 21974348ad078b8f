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
  it("lets a ledger, CDC, windows in update or append mode and several such outputs, a join, and rows delivered to a webhook, read their partitions in groups; leaves the field out by default", () => {
    expect(errorsOf(withParallelism(settlementsSpec(), 3))).toEqual([]);
    expect(errorsOf(withParallelism(splitSpec(), 3))).toEqual([]);
    expect(errorsOf(withParallelism(joinedSpec(), 2))).toEqual([]);
    const rows = withParallelism(ledgerSpec(), 3);
    rows.sink = { webhook: { urlFromEnv: "HOOK_URL", idempotencyKey: ["event_id"] } };
    expect(errorsOf(rows)).toEqual([]);
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
    const split = withParallelism(splitSpec(), 2);
    const outputs = split.outputs as Record<string, Record<string, unknown>>;
    outputs.alerts = {
      aggregate: {
        groupBy: ["merchant_id"],
        window: { tumbling: "5m" },
        measures: { events: "count()" },
        outputMode: "append",
      },
      sink: { webhook: { urlFromEnv: "HOOK_URL", idempotencyKey: ["merchant_id", "window_start"] } },
    };
    const finance = outputs.finance!.aggregate as Record<string, unknown>;
    delete finance.window;
    delete finance.allowedLateness;
    finance.outputMode = "complete";
    expect(errorsOf(split)).toEqual([
      { path: at, message: expect.stringMatching(/with outputMode complete in output finance/) },
      {
        path: at,
        message: expect.stringMatching(/with an aggregate delivered to a webhook in output alerts/),
      },
    ]);
    const windows = withParallelism(settlementsSpec(), 2);
    (windows.aggregate as Record<string, unknown>).outputMode = "append";
    windows.sink = {
      webhook: { urlFromEnv: "HOOK_URL", idempotencyKey: ["merchant_id", "window_start"] },
    };
    expect(errorsOf(windows)).toEqual([
      { path: at, message: expect.stringMatching(/with an aggregate delivered to a webhook \(/) },
    ]);
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
