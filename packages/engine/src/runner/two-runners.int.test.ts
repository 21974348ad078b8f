// Guarantee: two runners on the same pipeline version never both commit (product.md, semantics 1;
// "nothing in Sluice may assume a single worker process").
//
// Two `sluice run` processes are started at the same instant on the same spec, so they register the
// same version and each takes the lease. The one whose lease was taken over is fenced: its next plan
// or commit is rejected and it exits 3. No batch id is committed by both, and the audit finds every
// event id exactly once with gap-free batches that tile the topic's offsets.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments, type Manifest } from "@sluice/producer";
import { auditExactlyOnce } from "../testing/exactly-once-audit";
import {
  createEngineFixture,
  ledgerSpec,
  pipelineVersionIds,
  type EngineFixture,
} from "../testing/engine-fixture";
import { committedBatchIds, specDir, spawnSluice } from "../testing/sluice-process";

let fx: EngineFixture;
let manifest: Manifest;
let specs: Awaited<ReturnType<typeof specDir>>;

beforeAll(async () => {
  fx = await createEngineFixture("two_runners");
  specs = await specDir();
  ({ manifest } = await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: 10_000,
    partitions: 3,
    seed: 99,
    duplicateShare: 0.05,
    malformedShare: 0.01,
    manifest: "ids",
    log: () => undefined,
  }));
});
afterAll(async () => {
  await specs?.cleanup();
  await fx?.close();
});

describe("two runners at once", () => {
  it("of two runners started together on one pipeline version, one commits and the other is fenced off with exit code 3; nothing is written twice", async () => {
    const spec = ledgerSpec(fx.topic, {
      name: "twin-ledger",
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 500 } },
    });
    const file = await specs.write("twin-ledger", spec as unknown as Record<string, unknown>);
    const env = { databaseUrl: fx.db.url };

    const runners = [
      spawnSluice(["run", file, "--until-caught-up"], env),
      spawnSluice(["run", file, "--until-caught-up"], env),
    ];
    const exits = await Promise.all(runners.map((r) => r.exited));
    const results = runners.map((r, i) => ({
      code: exits[i]!.code,
      batches: committedBatchIds(r.stdout),
      stderr: r.stderr.join("\n"),
    }));
    console.log(
      `two-runners: ${JSON.stringify(results.map((r) => ({ code: r.code, batches: r.batches.length, first: r.batches[0], last: r.batches.at(-1), stderr: r.stderr.slice(-600) })))}`,
    );

    // Exactly one finishes the backlog; the other was fenced off when the winner took the lease.
    const winner = results.find((r) => r.code === 0);
    const loser = results.find((r) => r !== winner);
    expect(results.map((r) => r.code).sort()).toEqual([0, 3]);
    expect(loser!.stderr).toMatch(/another runner took over/);
    // Once fenced, the loser never commits again: whatever it committed came before the winner's batches.
    if (loser!.batches.length > 0)
      expect(Math.max(...loser!.batches)).toBeLessThan(Math.min(...winner!.batches));
    const all = [...loser!.batches, ...winner!.batches];
    expect(new Set(all).size).toBe(all.length);

    const versionIds = await pipelineVersionIds(fx.pool, "twin-ledger");
    expect(versionIds).toHaveLength(1);
    const { batches } = await auditExactlyOnce({
      pool: fx.pool,
      kafka: fx.kafka,
      topic: fx.topic,
      table: "ledger",
      versionIds,
      expectedIds: manifest.eventIds!,
      counts: manifest.counts,
    });
    // Every committed batch was announced by exactly one of the two processes.
    expect(all.sort((a, b) => a - b)).toEqual(batches.map((b) => b.batchId));
  });
});
