// The dry run against real Kafka and Postgres: on an adversarial sample (malformed JSON, type
// mismatches, unknown fields, duplicates, rows an expectation drops, rows the filter removes) its
// outcome totals, result rows and dead letters are what a real batch over the same offsets commits —
// the same engine code gives the same answer — and it writes nothing: every table's row count (the
// sink's too, which it must not even create) is the same before and after.
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import { PipelineRunner, registerPipelineVersion, type BatchProgress } from "@sluice/engine";
import { ledgerSpec, settlementsSpec, silentLogger } from "@sluice/engine/testing";
import { createTestDatabase, endPool, testServices, uniqueName, type TestDatabase } from "@sluice/testing";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dryRunDraft, type TDryRunDraft } from "./dry-run-draft";

let database: TestDatabase;
let pool: pg.Pool;
let kafka: Kafka;
let topic: string;

const event = (i: number, over: Record<string, unknown> = {}) => ({
  event_id: `e-${i}`,
  type: ["authorization", "settlement", "refund"][i % 3],
  merchant_id: `m${i % 4}`,
  customer_id: `c${i % 5}`,
  payment_id: `p-${i}`,
  seq: i,
  amount: `${10 + i}.25`,
  currency: i % 10 === 0 ? "JPY" : "EUR",
  card_country: "DE",
  event_time: new Date(Date.UTC(2026, 10, 30, 12, 0, 0) + i * 17_000).toISOString(),
  ...over,
});

/** 90 records over 3 partitions: every way a row can go, with the answer known by construction. */
function adversarialMessages(): { partition: number; value: string }[] {
  const values: string[] = [];
  for (let i = 0; i < 60; i++) values.push(JSON.stringify(event(i)));
  for (let i = 0; i < 10; i++) values.push(JSON.stringify(event(i * 3))); // duplicates of earlier ids
  for (let i = 0; i < 5; i++) values.push(`{"event_id": "broken-${i}", "amount": `); // malformed JSON
  for (let i = 0; i < 5; i++) values.push(JSON.stringify(event(100 + i, { amount: "not a number" }))); // type mismatch: quarantined
  for (let i = 0; i < 5; i++) values.push(JSON.stringify(event(200 + i, { type: "chargeback" }))); // dropped by known_type
  for (let i = 0; i < 5; i++) values.push(JSON.stringify(event(300 + i, { new_field: i }))); // unknown field: rescued
  return values.map((value, i) => ({ partition: i % 3, value }));
}

async function tableCounts(): Promise<Record<string, number>> {
  const tables = await pool.query<{ name: string }>(
    `SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) AS name FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
  );
  const counts: Record<string, number> = {};
  for (const { name } of tables.rows)
    counts[name] = Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${name}`)).rows[0]!.n);
  return counts;
}

async function realFirstBatch(
  spec: TPipelineSpec,
): Promise<{ pipelineVersionId: string; progress: BatchProgress }> {
  const { pipelineVersionId } = await registerPipelineVersion(pool, spec);
  const runner = await PipelineRunner.open(
    { pool, kafka, logger: silentLogger },
    { pipelineVersionId, spec, owner: "test", readAhead: false },
  );
  try {
    const r = await runner.runBatch();
    if (r.kind !== "committed") throw new Error("the real batch read nothing");
    return { pipelineVersionId, progress: r.progress };
  } finally {
    await runner.close();
  }
}

function ok(result: TDryRunDraft): Extract<TDryRunDraft, { ok: true }> {
  if (!result.ok) throw new Error(result.message);
  return result;
}

beforeAll(async () => {
  database = await createTestDatabase("dry_run");
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
  kafka = new Kafka({
    brokers: testServices.kafkaBrokers,
    clientId: "it-dry-run",
    logLevel: logLevel.NOTHING,
  });
  topic = uniqueName("dry_run");
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: adversarialMessages(), acks: -1 });
  await producer.disconnect();
});
afterAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
  await endPool(pool);
  await database?.drop();
});

const ledger = (name: string) =>
  ledgerSpec(topic, {
    name,
    source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 10_000 } },
    expectations: [
      { name: "known_type", expr: "type in ['authorization', 'settlement', 'refund']", action: "drop" },
      { name: "known_currency", expr: "currency in ['USD','EUR','GBP']", action: "warn" },
    ],
    transform: { filter: "type != 'authorization'" },
    sink: { postgres: { table: name.replace(/-/g, "_") } },
  });

describe("dry run of a draft", () => {
  it("a ledger's dry run gives the totals, rows and dead letters a real batch over the same offsets commits, and writes nothing", async () => {
    const spec = ledger("dry-ledger");
    const before = await tableCounts();
    const dry = ok(await dryRunDraft({ pool, kafka }, spec, { kind: "last", perPartition: 1000 }));
    expect(await tableCounts()).toEqual(before);
    expect(Object.keys(before)).not.toContain("public.dry_ledger");

    // Known by construction: 90 rows; 5 malformed, 5 quarantined, 5 dropped; of the 60 + 5 rescued
    // valid ids, authorizations are filtered before dedup; the 10 repeats of e-0, e-3, … are
    // authorizations (i % 3 == 0), so they are filtered too, never reaching dedup.
    expect(dry.inputRows).toBe(90);
    expect(dry.outcomes).toMatchObject({ deadLetter: 5, quarantined: 5, dropped: { known_type: 5 } });
    expect(dry.rows.filter((r) => r.verdict.outcome === "dead_letter")).toHaveLength(5);
    expect(dry.rows.find((r) => r.value?.includes('"new_field"'))?.verdict.rescued).toEqual({
      new_field: expect.any(Number),
    });
    expect(dry.written).toBe("nothing");

    const { pipelineVersionId, progress } = await realFirstBatch(spec);
    expect(progress.outcomes).toEqual(dry.outcomes);
    expect(progress.inputRows).toBe(dry.inputRows);
    const sink = await pool.query<{ event_id: string }>(`SELECT event_id FROM dry_ledger ORDER BY event_id`);
    expect(sink.rows.length).toBeGreaterThan(0);
    expect(dry.result.rows.map((r) => r.event_id).sort()).toEqual(sink.rows.map((r) => r.event_id));
    const dead = await pool.query<{ at: string }>(
      `SELECT partition || ':' || "offset" AS at FROM dead_letters WHERE pipeline_version_id = $1 ORDER BY 1`,
      [pipelineVersionId],
    );
    const dryDead = dry.rows
      .filter((r) => ["dead_letter", "quarantined", "late"].includes(r.verdict.outcome))
      .map((r) => `${r.partition}:${r.offset}`)
      .sort();
    expect(dead.rows).toHaveLength(10);
    expect(dryDead).toEqual(dead.rows.map((r) => r.at));
  });

  it("duplicates within the sample are flagged row by row, and the real batch counts the same", async () => {
    // No filter this time: the repeated ids reach dedup.
    const spec = ledgerSpec(topic, {
      name: "dry-dups",
      source: ledger("x").source,
      expectations: ledger("x").expectations,
      sink: { postgres: { table: "dry_dups" } },
    });
    const dry = ok(await dryRunDraft({ pool, kafka }, spec, { kind: "last", perPartition: 1000 }));
    const flagged = dry.rows.filter((r) => r.verdict.outcome === "duplicate");
    expect(flagged).toHaveLength(10);
    expect(new Set(flagged.map((r) => r.verdict.dedupKey))).toEqual(
      new Set(Array.from({ length: 10 }, (_, i) => `e-${i * 3}`)),
    );
    const { progress } = await realFirstBatch(spec);
    expect(progress.outcomes).toEqual(dry.outcomes);
  });

  it("a windowed aggregate's dry run shows the windows each row updates and the result rows the real batch writes", async () => {
    const spec = settlementsSpec(
      topic,
      "dry-windows",
      "dry_windows",
      { window: { tumbling: "5m" }, outputMode: "update" },
      { source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 10_000 } } },
    );
    const before = await tableCounts();
    const dry = ok(await dryRunDraft({ pool, kafka }, spec, { kind: "last", perPartition: 1000 }));
    expect(await tableCounts()).toEqual(before);
    const sinkRow = dry.rows.find((r) => r.verdict.outcome === "sink")!;
    expect(sinkRow.windows?.[0]).toMatchObject({
      group: expect.stringMatching(/^m\d$/),
      start: expect.any(Date),
      end: expect.any(Date),
    });

    const { progress } = await realFirstBatch(spec);
    expect(progress.outcomes).toEqual(dry.outcomes);
    const key = (r: Record<string, unknown>) =>
      `${String(r.merchant_id)}@${new Date(r.window_start as string | Date).toISOString()}=${String(r.events)}`;
    const sink = await pool.query<Record<string, unknown>>(
      `SELECT merchant_id, window_start, events FROM dry_windows`,
    );
    expect(sink.rows.length).toBeGreaterThan(0);
    expect(dry.result.rows.map(key).sort()).toEqual(sink.rows.map(key).sort());
  });

  it("a time range reads the records whose Kafka timestamps fall in it, at most N per partition", async () => {
    const hourAgo = new Date(Date.now() - 3_600_000);
    const all = ok(
      await dryRunDraft({ pool, kafka }, ledger("dry-range"), {
        kind: "range",
        from: hourAgo,
        to: new Date(Date.now() + 60_000),
        perPartition: 1000,
      }),
    );
    expect(all.inputRows).toBe(90);
    expect(all.truncatedPartitions).toEqual([]);
    const capped = ok(
      await dryRunDraft({ pool, kafka }, ledger("dry-range"), {
        kind: "range",
        from: hourAgo,
        to: new Date(Date.now() + 60_000),
        perPartition: 7,
      }),
    );
    expect(capped.ranges.map((r) => r.to - r.from)).toEqual([7, 7, 7]);
    expect(capped.truncatedPartitions).toEqual([0, 1, 2]);
    const before = ok(
      await dryRunDraft({ pool, kafka }, ledger("dry-range"), {
        kind: "range",
        from: new Date(hourAgo.getTime() - 3_600_000),
        to: hourAgo,
        perPartition: 1000,
      }),
    );
    expect(before.inputRows).toBe(0);
  });

  it("a sample larger than the limit is refused before anything is read", async () => {
    const res = await dryRunDraft({ pool, kafka }, ledger("dry-big"), {
      kind: "last",
      perPartition: 1000 * 10,
    });
    expect(res).toEqual({
      ok: false,
      message: expect.stringMatching(/over the limit of 5,000 records: ask for at most 1666 per partition/),
    });
  });

  it("a topic that does not exist is answered with the field and the fix", async () => {
    const res = await dryRunDraft(
      { pool, kafka },
      ledgerSpec("no-such-topic-anywhere", { name: "dry-none" }),
      { kind: "last", perPartition: 10 },
    );
    expect(res).toEqual({
      ok: false,
      message: expect.stringMatching(
        /^source\.kafka\.topic: the topic "no-such-topic-anywhere" does not exist/,
      ),
    });
  });
});
