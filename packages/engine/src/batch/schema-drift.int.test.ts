// Guarantee: the contract holds at the boundary under schema drift, and nothing vanishes silently
// (product.md, semantics 6; issue 3 "Contract at the boundary").
//
// An upstream producer first sends clean events, then starts adding a field (`campaign`), then also
// changes a type (`amount` becomes a non-numeric string like "USD 42.10"). The same topic is run
// through three pipelines that differ only in onUnknownField:
//   rescue     → the added field is kept in the sink row's `_rescued` jsonb column
//   quarantine → the row goes to dead_letters with outcome `quarantined`
//   reject     → the row goes to dead_letters with outcome `dead_letter`
// and in all three the type change is quarantined (onTypeMismatch: quarantine) with a reason naming
// the field. Every row is counted in batch_log, and the counts match what the producer sent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments, type Manifest } from "@sluice/producer";
import type { OutcomeCounts } from "./outcomes";
import { PipelineRunner } from "../runner/pipeline-runner";
import { registerPipelineVersion } from "../store/register-version";
import { createEngineFixture, ledgerSpec, type EngineFixture } from "../testing/engine-fixture";

const PER_PHASE = 1000;

let fx: EngineFixture;
const phases: Record<"clean" | "added" | "changed", string[]> = { clean: [], added: [], changed: [] };

const ids = (m: Manifest) => [...m.eventIds!].sort();

beforeAll(async () => {
  fx = await createEngineFixture("drift");
  const common = { topic: fx.topic, kafka: fx.kafka, count: PER_PHASE, partitions: 2, log: () => undefined };
  phases.clean = ids((await producePayments({ ...common, seed: 1, idPrefix: "clean" })).manifest);
  const added = (
    await producePayments({ ...common, seed: 2, idPrefix: "added", extraFields: { campaign: "spring-sale" } })
  ).manifest;
  const changed = (
    await producePayments({
      ...common,
      seed: 3,
      idPrefix: "changed",
      extraFields: { campaign: "spring-sale" },
      typeChanges: { amount: "non-numeric-string" },
    })
  ).manifest;
  // The producer really drifted every event of the later phases.
  expect(added.counts.drifted).toBe(PER_PHASE);
  expect(changed.counts.drifted).toBe(PER_PHASE);
  phases.added = ids(added);
  phases.changed = ids(changed);
});
afterAll(() => fx?.close());

async function runToEnd(onUnknownField: "rescue" | "quarantine" | "reject") {
  const table = `drift_${onUnknownField}`;
  const base = ledgerSpec(fx.topic);
  const spec = ledgerSpec(fx.topic, {
    name: `drift-${onUnknownField}`,
    contract: { ...base.contract, onUnknownField, onTypeMismatch: "quarantine" },
    sink: { postgres: { table } },
  });
  const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
  const runner = await PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: "drift-test" });
  try {
    while ((await runner.runBatch()).kind === "committed");
  } finally {
    await runner.close();
  }
  const sink = await fx.pool.query<{ event_id: string; _rescued: Record<string, unknown> | null }>(
    `SELECT event_id, _rescued FROM "${table}"`,
  );
  const dl = await fx.pool.query<{ event_id: string; outcome: string; reason: string }>(
    `SELECT payload->>'event_id' AS event_id, outcome, reason FROM dead_letters WHERE pipeline_version_id = $1`,
    [pipelineVersionId],
  );
  const log = await fx.pool.query<{ outcomes: OutcomeCounts }>(
    `SELECT outcomes FROM batch_log WHERE pipeline_version_id = $1`,
    [pipelineVersionId],
  );
  const total = (k: "sink" | "quarantined" | "deadLetter") => log.rows.reduce((s, r) => s + r.outcomes[k], 0);
  return {
    sink: sink.rows,
    sinkIds: sink.rows.map((r) => r.event_id).sort(),
    deadLetters: (outcome: string, reason: RegExp) =>
      dl.rows
        .filter((r) => r.outcome === outcome && reason.test(r.reason))
        .map((r) => r.event_id)
        .sort(),
    deadLetterCount: dl.rows.length,
    counted: { sink: total("sink"), quarantined: total("quarantined"), deadLetter: total("deadLetter") },
  };
}

const TYPE_CHANGE_REASON = /^field "amount" should be decimal, got "[A-Z]{3} -?\d+\.\d{2}"$/;
const UNKNOWN_FIELD_REASON = /^unknown field "campaign"/;

describe("schema drift: a field is added, then a type changes", () => {
  it("onUnknownField rescue keeps the added field in _rescued and quarantines the type change naming the field", async () => {
    const r = await runToEnd("rescue");
    expect(r.sinkIds).toEqual([...phases.clean, ...phases.added].sort());
    const added = new Set(phases.added);
    for (const row of r.sink)
      expect(row._rescued).toEqual(added.has(row.event_id) ? { campaign: "spring-sale" } : null);
    expect(r.deadLetters("quarantined", TYPE_CHANGE_REASON)).toEqual(phases.changed);
    expect(r.deadLetterCount).toBe(PER_PHASE);
    expect(r.counted).toEqual({ sink: 2 * PER_PHASE, quarantined: PER_PHASE, deadLetter: 0 });
  });

  it("onUnknownField quarantine quarantines rows with the added field, and the type change naming the field", async () => {
    const r = await runToEnd("quarantine");
    expect(r.sinkIds).toEqual(phases.clean);
    expect(r.sink.every((row) => row._rescued === null)).toBe(true);
    expect(r.deadLetters("quarantined", UNKNOWN_FIELD_REASON)).toEqual(phases.added);
    expect(r.deadLetters("quarantined", TYPE_CHANGE_REASON)).toEqual(phases.changed);
    expect(r.deadLetterCount).toBe(2 * PER_PHASE);
    expect(r.counted).toEqual({ sink: PER_PHASE, quarantined: 2 * PER_PHASE, deadLetter: 0 });
  });

  it("onUnknownField reject dead-letters rows with the added field, and still quarantines the type change", async () => {
    const r = await runToEnd("reject");
    expect(r.sinkIds).toEqual(phases.clean);
    expect(r.deadLetters("dead_letter", UNKNOWN_FIELD_REASON)).toEqual(phases.added);
    expect(r.deadLetters("quarantined", TYPE_CHANGE_REASON)).toEqual(phases.changed);
    expect(r.deadLetterCount).toBe(2 * PER_PHASE);
    expect(r.counted).toEqual({ sink: PER_PHASE, quarantined: PER_PHASE, deadLetter: PER_PHASE });
  });
});
