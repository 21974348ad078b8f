// `sluice run --until-caught-up` while Postgres restarts under it: a private cluster (never the shared
// one) is stopped with `-m fast` in the middle of a windowed run — every connection is cut, the one in
// a transaction too — and started again seconds later. The run waits and retries like a broker outage,
// saying so in one line per retry, exits 0, and its windows equal the SQL recomputation over the raw
// events exactly.
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { producePayments } from "@sluice/producer";
import {
  createEngineFixture,
  expectBatchesCoverTopic,
  loadReferenceBatches,
  loadReferenceEvents,
  settlementsSpec,
  settlementsWorkload,
  SINK_COLUMNS,
  spawnSluice,
  specDir,
  tumbling5mLateness3mSql,
  type EngineFixture,
  type SluiceProcess,
} from "@sluice/engine/testing";
import { startPrivatePostgres, type PrivatePostgres } from "@sluice/testing";

const PROGRESS = /^batch \d+/;
let fx: EngineFixture;
let cluster: PrivatePostgres;
let databaseUrl: string;
let pool: pg.Pool;
let specs: Awaited<ReturnType<typeof specDir>>;
let run: SluiceProcess | undefined;

beforeAll(async () => {
  // The fixture gives the topic (and a database on the shared server this test does not use).
  fx = await createEngineFixture("pg_restart");
  cluster = await startPrivatePostgres();
  databaseUrl = await cluster.createMigratedDatabase("sluice");
  pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  // The test's own connections see the outage too.
  pool.on("error", () => undefined);
  await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    ...settlementsWorkload(),
    manifest: "counts",
    log: () => undefined,
  });
  specs = await specDir();
});
afterAll(async () => {
  // Also when a test timed out: no sluice process outlives the file.
  if (run && run.child.exitCode === null && run.child.signalCode === null) {
    run.child.kill("SIGKILL");
    await run.exited;
  }
  await pool?.end().catch(() => undefined);
  await cluster?.destroy();
  await specs?.cleanup();
  await fx?.close();
});

describe("sluice run while Postgres restarts", () => {
  it(
    "waits for Postgres, retries, exits 0, and the windows equal the recomputation exactly",
    { timeout: 300_000 },
    async () => {
      const spec = settlementsSpec(
        fx.topic,
        "restart-windows",
        "restart_windows",
        { window: { tumbling: "5m" }, outputMode: "update", allowedLateness: "3m" },
        {
          source: { kafka: { topic: fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 100 } },
        },
      );
      const file = await specs.write("restart-windows", spec);
      run = spawnSluice(["run", file, "--until-caught-up"], { databaseUrl });
      const { child } = run;
      try {
        expect(await run.waitForLines(PROGRESS, 2)).toBe(true);
        await cluster.stop();
        // The outage itself: Postgres is down this long while the run goes on.
        await sleep(8000);
        await cluster.start();
        const { code } = await run.exited;
        expect({ code, stderr: run.stderr.slice(-10) }).toEqual({ code: 0, stderr: expect.anything() });
      } finally {
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      // It saw the outage, said so in a line a person reads, and carried on.
      const retries = run.stderr.filter((l) =>
        /^Postgres at 127\.0\.0\.1:\d+ unreachable \(.+\), retrying in \d+ s \(attempt \d+ of \d+\)$/.test(l),
      );
      console.log(`Postgres restart under sluice run: ${retries.length} retry line(s), e.g. "${retries[0]}"`);
      expect(retries.length).toBeGreaterThan(0);
      expect(run.stderr.filter((l) => !retries.includes(l))).toEqual([]);
      expect(run.stdout.at(-1)).toBe("caught up: no new offsets");

      await loadReferenceEvents(pool, fx.kafka, fx.topic);
      const versions = await pool.query<{ id: string }>(`SELECT id FROM pipeline_versions`);
      await loadReferenceBatches(
        pool,
        versions.rows.map((v) => v.id),
      );
      const expected = await pool.query(tumbling5mLateness3mSql());
      const actual = await pool.query(
        `SELECT ${SINK_COLUMNS} FROM restart_windows ORDER BY window_start, merchant_id`,
      );
      expect(actual.rows.length).toBeGreaterThan(50);
      expect(actual.rows).toEqual(expected.rows);
      // The committed batches read the whole topic, each offset once.
      await expectBatchesCoverTopic(pool, fx.kafka, fx.topic);
    },
  );
});
