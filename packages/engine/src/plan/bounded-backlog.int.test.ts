// Guarantee: bounded input per batch (product.md, semantics 3). A 200k-message backlog with
// maxOffsetsPerTrigger 20000 drains in about ten bounded batches, never one giant one, and every
// batch takes its share from every partition (the cap is spread over partitions by backlog).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments, type Manifest } from "@sluice/producer";
import { PipelineRunner } from "../runner/pipeline-runner";
import type { BatchProgress } from "../store/progress-record";
import { registerPipelineVersion } from "../store/register-version";
import { createEngineFixture, ledgerSpec, type EngineFixture } from "../testing/engine-fixture";

const MESSAGES = 200_000;
const CAP = 20_000;
const PARTITIONS = 4;

let fx: EngineFixture;
let manifest: Manifest;

beforeAll(async () => {
  fx = await createEngineFixture("bounded");
  ({ manifest } = await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: MESSAGES,
    partitions: PARTITIONS,
    seed: 2000,
    duplicateShare: 0.02,
    manifest: "ids",
    batchSize: 5000,
    log: () => undefined,
  }));
}, 180_000);
afterAll(() => fx?.close());

describe("bounded batches", () => {
  it(
    "a 200k-message backlog with maxOffsetsPerTrigger 20000 drains in 10 batches of at most 20000, each spread over all partitions",
    { timeout: 240_000 },
    async () => {
      const spec = ledgerSpec(fx.topic, {
        name: "bounded-ledger",
        source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: CAP } },
      });
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
      const runner = await PipelineRunner.open(fx.resources, {
        pipelineVersionId,
        spec,
        owner: "bounded-test",
      });
      const progress: BatchProgress[] = [];
      const started = Date.now();
      try {
        for (;;) {
          const r = await runner.runBatch();
          if (r.kind === "empty") break;
          progress.push(r.progress);
          // A runaway loop would show up here long before the test timeout.
          expect(progress.length).toBeLessThanOrEqual(Math.ceil(MESSAGES / CAP));
        }
      } finally {
        await runner.close();
      }
      const seconds = (Date.now() - started) / 1000;
      console.log(
        `bounded-backlog: ${progress.length} batches, ${MESSAGES} messages in ${seconds.toFixed(1)} s (${Math.round(MESSAGES / seconds)}/s)`,
      );

      expect(manifest.counts.messages).toBe(MESSAGES);
      expect(progress.map((p) => p.inputRows)).toEqual(Array.from({ length: MESSAGES / CAP }, () => CAP));
      for (const p of progress) {
        // Each batch reads from every partition, and the ranges it reports add up to its input.
        expect(p.sources.map((s) => s.partition).sort()).toEqual(
          Array.from({ length: PARTITIONS }, (_, i) => i),
        );
        for (const s of p.sources) expect(s.endOffset - s.startOffset).toBeGreaterThan(0);
        expect(p.sources.reduce((n, s) => n + s.endOffset - s.startOffset, 0)).toBe(p.inputRows);
      }
      expect(progress.at(-1)!.backlog).toBe(0);
      expect(progress[0]!.backlog).toBe(MESSAGES - CAP);

      const sink = await fx.pool.query<{ n: string; distinct: string }>(
        `SELECT count(*) AS n, count(DISTINCT event_id) AS distinct FROM ledger`,
      );
      expect(Number(sink.rows[0]!.n)).toBe(manifest.eventIds!.size);
      expect(Number(sink.rows[0]!.distinct)).toBe(manifest.eventIds!.size);
      const sinkSum = progress.reduce((n, p) => n + p.outcomes.sink, 0);
      const dupSum = progress.reduce((n, p) => n + p.outcomes.duplicate, 0);
      expect({ sink: sinkSum, duplicate: dupSum }).toEqual({
        sink: manifest.counts.events,
        duplicate: manifest.counts.duplicates,
      });
    },
  );
});
