// ReDoS against the console over HTTP: an owner's dry run of a spec whose expression is the probe's
// hostile regular expression, over a sample of long values, must not hold up anyone else's request.
// /api/health is timed before (the baseline, in this same test) and while the dry run runs.
import { setTimeout as sleep } from "node:timers/promises";
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import superjson from "superjson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerSpec, sendLedgerEvents } from "@sluice/engine/testing";
import { dryRunDraft } from "@sluice/services";
import { endPool, testServices, uniqueName } from "@sluice/testing";
import { serveOverHttp, type TConsoleOverHttp } from "../testing/console-over-http";
import { DEMO_PASSWORD, startConsoleUnderTest, type TConsoleUnderTest } from "../testing/console-under-test";

let cut: TConsoleUnderTest;
let http: TConsoleOverHttp;
let kafka: Kafka;
const topic = uniqueName("redos").replace(/_/g, "-");
const RECORDS = 2000;
// The probe's expression: exponential in the value's length for a backtracking engine.
const hostileSpec = () =>
  ledgerSpec(topic, {
    name: "redos-probe",
    transform: { filter: "(event_id + 'aaa').matches('^([a-z0-9_]+)+!$')" },
  });

beforeAll(async () => {
  cut = await startConsoleUnderTest("redos");
  http = await serveOverHttp(cut);
  kafka = new Kafka({
    brokers: testServices.kafkaBrokers,
    clientId: "redos-test",
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
  await admin.disconnect();
  // Values of 1,500 characters: a backtracking engine would need longer than the universe's age per row.
  for (const part of "abcdefghij")
    await sendLedgerEvents(kafka, topic, {
      prefix: "a".repeat(1500) + part,
      count: RECORDS / 10,
      partitions: [0, 1],
    });
});
afterAll(async () => {
  await http?.close();
  await cut?.close();
});

async function timedHealth(): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${http.url}/api/health`);
  await res.arrayBuffer();
  return performance.now() - started;
}

describe("ReDoS", () => {
  it("redos: the probe's hostile regex in a dry run over long values never holds up /api/health", async () => {
    const { cookie } = await cut.signIn("admin@sluice.local", DEMO_PASSWORD);
    const baseline: number[] = [];
    for (let i = 0; i < 8; i++) baseline.push(await timedHealth());

    const input = encodeURIComponent(
      JSON.stringify(
        superjson.serialize({
          text: JSON.stringify(hostileSpec()),
          sample: { kind: "last", perPartition: 1000 },
        }),
      ),
    );
    let done = false;
    const startedAt = performance.now();
    // Done when the answer arrives; it is read after the timing (the client shares this process).
    const dryRun = fetch(`${http.url}/api/trpc/draft.dryRun?input=${input}`, {
      headers: { cookie: cookie! },
    }).finally(() => (done = true));
    const during: number[] = [];
    while (!done) {
      during.push(await timedHealth());
      await sleep(10);
    }
    const res = await dryRun;
    const dryRunMs = performance.now() - startedAt;
    expect(res.status).toBe(200);
    const json = (await res.json()) as { result: { data: { json: unknown } } };
    const data = json.result.data.json as {
      ok: boolean;
      inputRows: number;
      outcomes: { filtered: number };
    };
    // Every row was evaluated (and the hostile pattern matches none of them).
    expect(data).toMatchObject({ ok: true, inputRows: RECORDS, outcomes: { filtered: RECORDS } });
    // Health kept answering while the dry run ran: no answer waited for the dry run. A backtracking
    // engine on the server's event loop would hold one health call for (nearly) the whole dry run; the
    // bound is the larger of 5× the quiet answer, one second and half the dry run, so a loaded machine
    // (health answers vary by seconds there) cannot fail it and a blocked event loop cannot pass it.
    expect(during.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...during)).toBeLessThan(Math.max(5 * Math.max(...baseline), 1000, dryRunMs / 2));
  });

  it("a dry run that evaluates longer than its time limit is stopped with a message, nothing written", async () => {
    const pool = new pg.Pool({ connectionString: cut.database.url, max: 1 });
    const result = await dryRunDraft(
      { pool, kafka },
      hostileSpec(),
      { kind: "last", perPartition: 1000 },
      { evaluateTimeoutMs: 1 },
    ).finally(() => endPool(pool));
    expect(result).toEqual({
      ok: false,
      message: expect.stringMatching(
        /took longer than 0\.001 s to evaluate 2,000 records and was stopped \(nothing was written\)/,
      ),
    });
  });
});
