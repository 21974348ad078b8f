// The demo's customer-status pipeline (demo/pipelines/customer-status.yaml, as shipped) over the demo
// producer's change feed (DEMO_CHANGE_FEED: 5 changes/s over 500 customers, 10% overtaken, 2% repeated;
// event time simulated at that rate) for 2.2 hours of event time, on real Kafka and Postgres:
// - its cdc_state stays bounded: once the watermark (1 h behind) moves, each batch evicts, and what is
//   left is the live customers' current versions plus the changes not yet behind the watermark — not
//   every change ever applied;
// - the watermark delay suits the feed: no overtaken change is late, and the history table is exactly
//   the feed applied in sequence order.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  changesInOrder,
  DEMO_CHANGE_FEED,
  produceCustomerChanges,
  simulatedClock,
  type CustomerChange,
} from "@sluice/producer";
import { parseSpecOrThrow } from "@sluice/pipeline-spec";
import { expectedScd2, SCD2_COLUMNS } from "../testing/cdc-fixture";
import { createEngineFixture, drainPipeline, type EngineFixture } from "../testing/engine-fixture";
import { REPO_ROOT } from "../testing/sluice-process";

let fx: EngineFixture;
let feed: CustomerChange[];

beforeAll(async () => {
  fx = await createEngineFixture("cdc_demo");
  ({ feed } = await produceCustomerChanges({
    kafka: fx.kafka,
    topic: fx.topic,
    partitions: 3,
    keyBy: "customer", // as the demo producer keys them
    seed: 7,
    changes: 40_000,
    customers: DEMO_CHANGE_FEED.customers,
    shuffleShare: DEMO_CHANGE_FEED.shuffleShare,
    duplicateShare: DEMO_CHANGE_FEED.duplicateShare,
    clock: simulatedClock({ stepMs: 1000 / DEMO_CHANGE_FEED.ratePerSecond }),
  }));
});
afterAll(() => fx?.close());

describe("the demo's customer-status pipeline", () => {
  it(
    "keeps cdc_state bounded by the watermark over hours of the demo feed, with no late changes and the exact history",
    { timeout: 300_000 },
    async () => {
      const shipped = parseSpecOrThrow(
        await readFile(path.join(REPO_ROOT, "demo/pipelines/customer-status.yaml"), "utf8"),
      );
      expect(shipped.cdc).toMatchObject({ stateEviction: "watermark" });
      expect(shipped.eventTime).toMatchObject({ column: "changed_at" });
      const spec = { ...shipped, source: { kafka: { ...shipped.source.kafka, topic: fx.topic } } };

      const { pipelineVersionId, progress } = await drainPipeline(fx, spec);
      const late = progress.reduce((n, p) => n + p.outcomes.late, 0);
      expect(late).toBe(0);
      const table = await fx.pool.query(
        `SELECT ${SCD2_COLUMNS} FROM customer_status ORDER BY customer_id, valid_from`,
      );
      expect(table.rows).toEqual(expectedScd2(feed));

      const evicted = progress.map((p) => Number(p.operator?.evicted ?? 0));
      expect(evicted.slice(-3).every((n) => n > 0)).toBe(true);
      const cp = await fx.pool.query<{ watermark: Date }>(
        `SELECT watermark FROM checkpoints WHERE pipeline_version_id = $1`,
        [pipelineVersionId],
      );
      const watermark = cp.rows[0]!.watermark;
      const points = Number(
        (
          await fx.pool.query(`SELECT count(*) FROM cdc_state WHERE pipeline_version_id = $1`, [
            pipelineVersionId,
          ])
        ).rows[0].count,
      );

      // Without eviction every applied change would be a point. With it: at most one per customer
      // (its current version) plus two per change not yet behind the watermark (the change, and the
      // point it closed).
      const applied = changesInOrder(feed).length;
      const recent = changesInOrder(feed).filter((c) => new Date(c.changed_at) >= watermark).length;
      expect(points).toBeLessThanOrEqual(DEMO_CHANGE_FEED.customers + 2 * recent);
      expect(points).toBeLessThan(applied / 2);
      // Bounded, not merely smaller: it grows for the first hour, then stays where it was when eviction began.
      const stateRows = progress.map((p) => p.stateRows);
      const firstEviction = evicted.findIndex((n) => n > 0);
      expect(firstEviction).toBeGreaterThan(0);
      expect(firstEviction).toBeLessThan(progress.length - 2);
      for (const rows of stateRows.slice(firstEviction))
        expect(rows).toBeLessThanOrEqual(stateRows[firstEviction]! * 1.1);
      console.log(
        `demo customer-status: ${applied} changes applied in ${progress.length} batches; cdc_state ${points} points (${recent} changes within the watermark), state rows per batch ${stateRows.join(", ")}`,
      );
    },
  );
});
