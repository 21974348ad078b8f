// `sluice run --until-caught-up` while its Kafka broker is down for about 15 s: a private broker (never
// the shared one) is killed mid-run and started again. A person sees one readable line per retry —
// no raw kafkajs JSON — the run exits 0, and the ledger holds every event id exactly once. kafkajs' own
// log is there at LOG_LEVEL=debug.
import { setTimeout as sleep } from "node:timers/promises";
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  auditExactlyOnce,
  ledgerSpec,
  runSluice,
  spawnSluice,
  specDir,
  type SluiceProcess,
} from "@sluice/engine/testing";
import { producePayments, type Manifest } from "@sluice/producer";
import {
  createTestDatabase,
  endPool,
  freePort,
  startPrivateKafka,
  uniqueName,
  type PrivateKafka,
  type TestDatabase,
} from "@sluice/testing";

const PROGRESS = /^batch \d+/;
const RETRY_LINE = /, retrying in \d+ s \(attempt \d+ of \d+\)$/;
let broker: PrivateKafka;
let kafka: Kafka;
let database: TestDatabase;
let pool: pg.Pool;
let specs: Awaited<ReturnType<typeof specDir>>;
let run: SluiceProcess | undefined;
let manifest: Manifest;
const topic = uniqueName("kafka_outage");

beforeAll(async () => {
  broker = await startPrivateKafka();
  kafka = new Kafka({ brokers: broker.brokers, clientId: "it-kafka-outage", logLevel: logLevel.NOTHING });
  database = await createTestDatabase("kafka_outage");
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  specs = await specDir();
  ({ manifest } = await producePayments({
    topic,
    kafka,
    count: 8000,
    partitions: 3,
    seed: 77,
    duplicateShare: 0.05,
    malformedShare: 0.01,
    manifest: "ids",
    log: () => undefined,
  }));
});
afterAll(async () => {
  // Also when a test timed out: no sluice process outlives the file.
  if (run && run.child.exitCode === null && run.child.signalCode === null) {
    run.child.kill("SIGKILL");
    await run.exited;
  }
  if (pool) await endPool(pool);
  await database?.drop();
  await specs?.cleanup();
  await broker?.destroy();
});

describe("sluice run while Kafka is down", () => {
  // Generous: on a loaded two-core machine the broker's restart alone can take a minute.
  it(
    "prints one readable line per retry and no kafkajs JSON, exits 0, and the ledger is exact",
    { timeout: 360_000 },
    async () => {
      const spec = ledgerSpec(topic, {
        name: "outage-ledger",
        source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 100 } },
        sink: { postgres: { table: "outage_ledger" } },
      });
      const file = await specs.write("outage-ledger", spec);
      run = spawnSluice(["run", file, "--until-caught-up"], {
        databaseUrl: database.url,
        kafkaBrokers: broker.brokers,
      });
      const { child } = run;
      try {
        expect(await run.waitForLines(PROGRESS, 2)).toBe(true);
        await broker.kill();
        // The outage itself: the broker is down this long (its restart takes a while on top).
        await sleep(15_000);
        await broker.start();
        const { code } = await run.exited;
        expect({ code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.anything() });
      } finally {
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      console.log(`Kafka outage under sluice run: stderr was\n  ${run.stderr.join("\n  ")}`);
      // Only retry lines, a handful, saying what is down — never kafkajs' own JSON lines.
      expect(run.stderr.filter((l) => !RETRY_LINE.test(l))).toEqual([]);
      expect(run.stderr.length).toBeLessThanOrEqual(8);
      expect(
        run.stderr.some((l) =>
          new RegExp(
            `^Kafka at ${broker.brokers[0]} unreachable \\(.+\\), retrying in \\d+ s \\(attempt \\d+ of 8\\)$`,
          ).test(l),
        ),
      ).toBe(true);
      expect(run.stdout.at(-1)).toBe("caught up: no new offsets");

      const versions = await pool.query<{ id: string }>(`SELECT id FROM pipeline_versions`);
      await auditExactlyOnce({
        pool,
        kafka,
        topic,
        table: "outage_ledger",
        versionIds: versions.rows.map((v) => v.id),
        expectedIds: manifest.eventIds!,
        counts: manifest.counts,
      });
    },
  );

  it("LOG_LEVEL=debug shows kafkajs' own log, as debug lines", async () => {
    const write = (name: string) =>
      specs.write(name, ledgerSpec(topic, { name, sink: { postgres: { table: name.replace(/-/g, "_") } } }));
    const nowhere = [`127.0.0.1:${await freePort()}`];
    const [quiet, debug] = await Promise.all([
      runSluice(["run", await write("quiet-ledger"), "--once"], {
        databaseUrl: database.url,
        kafkaBrokers: nowhere,
      }),
      runSluice(["run", await write("debug-ledger"), "--once"], {
        databaseUrl: database.url,
        kafkaBrokers: nowhere,
        extra: { LOG_LEVEL: "debug" },
      }),
    ]);
    // --once does not retry: a broker that does not answer is a transient failure, exit 2.
    for (const r of [quiet, debug])
      expect({ code: r.code, stderr: r.stderr }).toEqual({
        code: 2,
        stderr: expect.stringContaining(`Kafka at ${nowhere[0]} unreachable`),
      });
    expect(quiet.stderr).not.toContain("kafkajs");
    expect(debug.stderr).toMatch(/^debug: kafkajs Connection: Connection error: connect ECONNREFUSED/m);
  });
});
