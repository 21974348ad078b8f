// Guarantee: dedup state never grows without bound (product.md, semantics 5). Over a long stream
// whose event times advance (the producer's simulated clock: 10 events per simulated second), with
// watermarkDelay 1m, keys are evicted as the watermark passes them: the state stays near one minute
// of events while the number of distinct ids keeps growing, every duplicate is still caught, and the
// size the engine reports is the size of the table. The ledger upserts (its table would not refuse a
// repeated event id): dedup state is all that catches duplicates. An append ledger keyed by its dedupe
// key keeps no dedup state at all — its table refuses every repeat — and still stores each id once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments, simulatedClock, type Manifest } from "@sluice/producer";
import {
  createEngineFixture,
  drainPipeline,
  ledgerSpec,
  sinkEventIds,
  type EngineFixture,
} from "../testing/engine-fixture";

const MESSAGES = 20_000;
const STEP_MS = 100; // simulated time between events: one minute = 600 events
// One minute of events plus slack for partitions drifting apart inside a batch: a bound that does
// not grow with the stream.
const STATE_BOUND = 1_200;

let fx: EngineFixture;
let manifest: Manifest;

beforeAll(async () => {
  fx = await createEngineFixture("dedup_state");
  ({ manifest } = await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: MESSAGES,
    partitions: 3,
    seed: 5,
    clock: simulatedClock({ stepMs: STEP_MS }),
    // Re-sends come 1..200 messages (at most 20 simulated seconds) after the original: within the watermark.
    duplicateShare: 0.05,
    manifest: "ids",
    log: () => undefined,
  }));
});
afterAll(() => fx?.close());

describe("dedup state", () => {
  it("stays bounded by the watermark over a long stream while every duplicate is still dropped", async () => {
    const spec = ledgerSpec(fx.topic, {
      name: "dedup-ledger",
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 2000 } },
      eventTime: { column: "event_time", watermarkDelay: "1m" },
      dedupe: { key: ["event_id"], within: "watermark" },
      sink: { postgres: { table: "ledger", mode: "upsert" } },
    });
    const { pipelineVersionId, progress } = await drainPipeline(fx, spec, "dedup-test");
    const distinct = manifest.eventIds!.size;
    const stateRows = progress.map((p) => p.stateRows);
    console.log(`dedup-state: ${distinct} distinct ids, state rows per batch ${JSON.stringify(stateRows)}`);

    // Bounded: never more than about a minute of keys, a small fraction of the distinct ids.
    expect(progress.length).toBeGreaterThanOrEqual(10);
    expect(Math.max(...stateRows)).toBeLessThanOrEqual(STATE_BOUND);
    expect(distinct).toBeGreaterThan(15 * STATE_BOUND);
    // ...but not emptied either: the keys of the last minute are kept to catch their duplicates.
    expect(stateRows.at(-1)).toBeGreaterThan(100);

    // Still exact: every duplicate caught, nothing late, every id once.
    const sum = (k: "sink" | "duplicate" | "late") => progress.reduce((n, p) => n + p.outcomes[k], 0);
    expect({ sink: sum("sink"), duplicate: sum("duplicate"), late: sum("late") }).toEqual({
      sink: distinct,
      duplicate: manifest.counts.duplicates,
      late: 0,
    });
    const sink = await fx.pool.query<{ n: string; d: string }>(
      `SELECT count(*) AS n, count(DISTINCT event_id) AS d FROM ledger`,
    );
    expect(sink.rows[0]).toEqual({ n: String(distinct), d: String(distinct) });

    // The reported size is the table's size, and only keys at or after the watermark remain.
    const state = await fx.pool.query<{
      rows: string;
      bytes: string;
      reported_rows: string;
      reported_bytes: string;
      behind: string;
    }>(
      `SELECT count(d.key) AS rows, coalesce(sum(octet_length(d.key) + 8), 0) AS bytes,
              c.state_rows AS reported_rows, c.state_bytes AS reported_bytes,
              count(d.key) FILTER (WHERE d.event_time < c.watermark) AS behind
         FROM checkpoints c LEFT JOIN dedup_state d ON d.pipeline_version_id = c.pipeline_version_id
        WHERE c.pipeline_version_id = $1 GROUP BY c.state_rows, c.state_bytes`,
      [pipelineVersionId],
    );
    const s = state.rows[0]!;
    expect({ rows: s.rows, bytes: s.bytes, behind: s.behind }).toEqual({
      rows: s.reported_rows,
      bytes: s.reported_bytes,
      behind: "0",
    });
    expect(Number(s.rows)).toBe(stateRows.at(-1));
  });

  it("an append ledger keyed by its dedupe key keeps no dedup state: its table refuses every duplicate, each counted", async () => {
    const spec = ledgerSpec(fx.topic, {
      name: "dedup-kept-by-sink",
      source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 2000 } },
      eventTime: { column: "event_time", watermarkDelay: "1m" },
      dedupe: { key: ["event_id"], within: "watermark" },
      sink: { postgres: { table: "ledger_kept" } },
    });
    const { pipelineVersionId, progress } = await drainPipeline(fx, spec, "dedup-test");
    const distinct = manifest.eventIds!.size;
    expect(progress.length).toBeGreaterThanOrEqual(10);
    expect(progress.map((p) => p.stateRows)).toEqual(progress.map(() => 0));
    const keys = await fx.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM dedup_state WHERE pipeline_version_id = $1`,
      [pipelineVersionId],
    );
    expect(keys.rows[0]!.n).toBe(0);

    const sum = (k: "sink" | "duplicate" | "late") => progress.reduce((n, p) => n + p.outcomes[k], 0);
    expect({ sink: sum("sink"), duplicate: sum("duplicate"), late: sum("late") }).toEqual({
      sink: distinct,
      duplicate: manifest.counts.duplicates,
      late: 0,
    });
    const ids = await sinkEventIds(fx.pool, "ledger_kept");
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual([...manifest.eventIds!].sort());
  });
});
