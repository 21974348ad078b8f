// Guarantee: nothing vanishes silently and nothing poisons the pipeline (product.md, semantics 6).
// Payloads Postgres cannot store as text — NUL bytes in a binary value or a key, a "\u0000" escape
// inside otherwise valid JSON — become dead letters with their raw bytes and a reason, and the batch
// commits — and `sluice status` reports them grouped by reason. (Found by the two-runners test: a random binary payload with a 0x00 byte made every commit
// of its batch fail, and since a batch re-runs over the same offsets, the pipeline could never pass it.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineRunner } from "../runner/pipeline-runner";
import { registerPipelineVersion } from "../store/register-version";
import { createEngineFixture, ledgerSpec, type EngineFixture } from "../testing/engine-fixture";
import { runSluice } from "../testing/sluice-process";

let fx: EngineFixture;

const event = (id: string, extra: Record<string, unknown> = {}) => ({
  event_id: id,
  type: "settlement",
  merchant_id: "m_1",
  customer_id: "c_1",
  payment_id: "pay_1",
  seq: 1,
  amount: "10.00",
  currency: "USD",
  card_country: "DE",
  event_time: "2025-01-01T00:00:00.000Z",
  ...extra,
});

beforeAll(async () => {
  fx = await createEngineFixture("nul_bytes");
  const admin = fx.kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: fx.topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = fx.kafka.producer();
  await producer.connect();
  await producer.send({
    topic: fx.topic,
    messages: [
      { key: "m_1", value: JSON.stringify(event("evt_ok_1")) },
      // Binary garbage with NUL bytes: not JSON, and V8's parse error quotes it.
      { key: "m_1", value: Buffer.from([0x00, 0xff, 0x00, 0x41, 0x00]) },
      // A key with a NUL byte.
      { key: Buffer.from([0x6d, 0x00, 0x31]), value: "not json" },
      // Valid JSON whose string field holds U+0000: neither text nor jsonb can store it.
      { key: "m_1", value: JSON.stringify(event("evt_nul", { merchant_id: "m\u00001" })) },
      { key: "m_1", value: JSON.stringify(event("evt_nul_rescued", { note: "a\u0000b" })) },
      // An unpaired UTF-16 surrogate (JSON.stringify writes it as the escape "\ud800"): not storable either.
      { key: "m_1", value: JSON.stringify(event("evt_lone_surrogate", { merchant_id: "m\ud800" })) },
      { key: "m_1", value: JSON.stringify(event("evt_ok_2")) },
    ],
  });
  await producer.disconnect();
});
afterAll(() => fx?.close());

describe("dead letters Postgres cannot store as text", () => {
  it("NUL bytes in a payload, a key or a JSON string become dead letters with a reason, and the batch commits", async () => {
    const spec = ledgerSpec(fx.topic);
    const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
    const runner = await PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: "nul-test" });
    try {
      const first = await runner.runBatch();
      expect(first.kind).toBe("committed");
      expect((await runner.runBatch()).kind).toBe("empty");
    } finally {
      await runner.close();
    }
    const sink = await fx.pool.query<{ event_id: string }>(`SELECT event_id FROM ledger ORDER BY event_id`);
    expect(sink.rows.map((r) => r.event_id)).toEqual(["evt_ok_1", "evt_ok_2"]);
    const dl = await fx.pool.query<{
      offset: string;
      outcome: string;
      reason: string;
      key: string | null;
      raw: Buffer;
    }>(
      `SELECT "offset", outcome, reason, key, raw FROM dead_letters WHERE pipeline_version_id = $1 ORDER BY "offset"`,
      [pipelineVersionId],
    );
    expect(dl.rows.map((r) => [Number(r.offset), r.outcome])).toEqual([
      [1, "dead_letter"],
      [2, "dead_letter"],
      [3, "dead_letter"],
      [4, "dead_letter"],
      [5, "dead_letter"],
    ]);
    expect(dl.rows[0]!.raw).toEqual(Buffer.from([0x00, 0xff, 0x00, 0x41, 0x00]));
    expect(dl.rows[0]!.reason).toMatch(/^not valid JSON/);
    expect(dl.rows[1]!.key).toBe("m\\u00001");
    for (const r of dl.rows.slice(2, 4)) expect(r.reason).toMatch(/\\u0000/);
    expect(dl.rows[4]!.reason).toContain("unpaired UTF-16 surrogate");

    // `sluice status` says what went wrong, grouped by reason (the console's page shows the same).
    const status = await runSluice(["status", spec.name], { databaseUrl: fx.db.url });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("dead letters (table dead_letters): dead_letter 5");
    expect(status.stdout).toMatch(/^ +2 × dead_letter: contains a \\u0000 \(NUL\) character/m);
    expect(status.stdout).toMatch(/^ +1 × dead_letter: contains an unpaired UTF-16 surrogate/m);
  });
});
