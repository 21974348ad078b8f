// Guarantee: exactly-once into Postgres, whatever instant a worker dies (product.md, semantics 1 and 2).
//
// `sluice run` works through a 150k-message backlog (duplicates, malformed rows, out-of-order events) in
// small batches while the test SIGKILLs it, again and again, at seeded random moments: during start-up
// (registration, lease, first plan, consumer join) and a random fraction of a batch after a progress
// line, so kills land between planning and commit, during the Kafka read and inside the commit
// transaction. After one final clean run, the audit must find every event id exactly once, gap-free
// batch ids, balanced batches that tile the topic's offsets, and each batch's range equal to its plan.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prng, producePayments, type Manifest } from "@sluice/producer";
import { auditExactlyOnce } from "../testing/exactly-once-audit";
import {
  createEngineFixture,
  ledgerSpec,
  pipelineVersionIds,
  type EngineFixture,
} from "../testing/engine-fixture";
import { PROGRESS_LINE, runSluice, specDir, spawnSluice } from "../testing/sluice-process";

// The backlog must outlast the kills: on a quiet machine a batch takes ~30 ms and a process commits
// about a dozen batches between its first progress line and the kill, so 20k and even 50k messages
// drained after ~20 kills. 150k leaves room for all of them; the final clean run drains the rest.
const MESSAGES = 150_000;
// Small batches (about 500 of them) so kills land in every phase.
const MAX_OFFSETS_PER_TRIGGER = 300;
const KILLS = 30;

let fx: EngineFixture;
let manifest: Manifest;
let specs: Awaited<ReturnType<typeof specDir>>;

beforeAll(async () => {
  fx = await createEngineFixture("crash");
  specs = await specDir();
  ({ manifest } = await producePayments({
    topic: fx.topic,
    kafka: fx.kafka,
    count: MESSAGES,
    partitions: 3,
    seed: 1729,
    duplicateShare: 0.05,
    malformedShare: 0.01,
    outOfOrderShare: 0.05,
    manifest: "ids",
    log: () => undefined,
  }));
});
afterAll(async () => {
  await specs?.cleanup();
  await fx?.close();
});

interface Kill {
  round: number;
  phase: "start-up" | "mid-batch";
  delayMs: number;
  batchesCommitted: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

describe("crash anywhere", () => {
  it(
    `SIGKILLed ${KILLS} times at random moments while draining a backlog, the pipeline still stores every event id exactly once`,
    { timeout: 300_000 },
    async () => {
      const spec = ledgerSpec(fx.topic, {
        name: "crash-ledger",
        source: {
          kafka: {
            topic: fx.topic,
            startingOffsets: "earliest",
            maxOffsetsPerTrigger: MAX_OFFSETS_PER_TRIGGER,
          },
        },
      });
      const file = await specs.write("crash-ledger", spec as unknown as Record<string, unknown>);
      const env = { databaseUrl: fx.db.url };
      const rng = Prng.from("crash-anywhere-1");

      const kills: Kill[] = [];
      // Adapt the random delays to this machine: how long start-up and one batch take here.
      const startupMs: number[] = [];
      const batchMs: number[] = [];
      let drained = false;
      for (let round = 0; kills.length < KILLS && round < KILLS * 2; round++) {
        const child = spawnSluice(["run", file, "--until-caught-up"], env);
        const spawnedAt = Date.now();
        const running = () => child.child.exitCode === null && child.child.signalCode === null;
        let phase: Kill["phase"];
        let delayMs: number;
        if (rng.chance(0.25)) {
          // Start-up: registering the version, taking the lease, the first plan and Kafka group join.
          phase = "start-up";
          delayMs = Math.round(rng.next() * (median(startupMs) || 3000));
          await Promise.race([sleep(delayMs), child.exited]);
        } else {
          // Mid-batch: a random moment up to 1.5 typical batches after the first progress line.
          phase = "mid-batch";
          const seen = await child.waitForLines(PROGRESS_LINE, 1);
          if (seen && startupMs.length < 5) startupMs.push(Date.now() - spawnedAt);
          delayMs = Math.round(rng.next() * 1.5 * (median(batchMs.slice(-20)) || 600));
          if (seen) await Promise.race([sleep(delayMs), child.exited]);
        }
        if (running()) {
          child.child.kill("SIGKILL");
          await child.exited;
          // Steady-state batch durations (a process's first batch also joins the Kafka group).
          for (const l of child.stdout.filter((x) => PROGRESS_LINE.test(x)).slice(1))
            batchMs.push(Number(/ in (\d+) ms/.exec(l)?.[1] ?? 0));
          kills.push({
            round,
            phase,
            delayMs,
            batchesCommitted: child.stdout.filter((l) => PROGRESS_LINE.test(l)).length,
          });
          continue;
        }
        // It exited on its own: only a clean "caught up" is acceptable, and then the backlog is gone.
        const { code } = await child.exited;
        expect({ code, stderr: child.stderr.slice(-5) }).toEqual({ code: 0, stderr: child.stderr.slice(-5) });
        drained = true;
        break;
      }

      // The final clean run finishes whatever is left and exits 0.
      const final = await runSluice(["run", file, "--until-caught-up"], env);
      expect({ code: final.code, stderr: final.stderr.slice(-2000) }).toEqual({
        code: 0,
        stderr: final.stderr.slice(-2000),
      });
      expect(final.stdout).toContain("caught up");

      const versionIds = await pipelineVersionIds(fx.pool, "crash-ledger");
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

      // Evidence that the kills landed where they matter: a batch planned by a killed process and
      // re-run by the next one (over the same range, checked by the audit) is marked replayed; a kill
      // inside a transaction leaves an aborted transaction behind in the database's statistics.
      const replayed = batches.filter((b) => b.progress.replayed).length;
      await fx.pool.query(`SELECT pg_stat_clear_snapshot()`);
      const stats = await fx.pool.query<{ xact_rollback: string }>(
        `SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()`,
      );
      const summary = {
        kills: kills.length,
        startUpKills: kills.filter((k) => k.phase === "start-up").length,
        midBatchKills: kills.filter((k) => k.phase === "mid-batch").length,
        drainedBeforeAllKills: drained,
        batches: batches.length,
        replayedBatches: replayed,
        abortedTransactions: Number(stats.rows[0]!.xact_rollback),
        medianBatchMs: median(batchMs),
        medianStartupMs: median(startupMs),
      };
      console.log(`crash-anywhere: ${JSON.stringify(summary)}`);
      expect(kills.length).toBeGreaterThanOrEqual(KILLS - 5);
      expect(replayed).toBeGreaterThan(0);
    },
  );
});
