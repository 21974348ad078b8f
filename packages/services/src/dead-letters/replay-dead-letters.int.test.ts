// Replaying dead letters end to end (issue 11), with the real engine, Postgres and Kafka:
//   - rows quarantined by version 1 (a type mismatch) replay into version 2 (the contract fixed) and
//     land in the sink exactly once — asked for twice, refused the second time naming the batch; and
//     even an item queued behind the service's back reaches the sink once (dedup makes it a
//     duplicate); a row that fails again is recorded as such, and its new dead letter is the one to
//     replay; the replay batch moves neither the offsets nor the watermark;
//   - a windowed pipeline refuses rows whose window is final and evicted, naming why, and the rows it
//     accepts land in their open window exactly;
//   - the runner process SIGKILLed while the replay batch is inside its commit transaction (sink rows
//     written, not committed): afterwards the replay was applied not at all, then exactly once.
import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { registerPipelineVersion } from "@sluice/engine";
import {
  createEngineFixture,
  drainPipeline,
  drainRunner,
  ledgerSpec,
  spawnSluice,
  specDir,
  type EngineFixture,
} from "@sluice/engine/testing";
import { PipelineRunner } from "@sluice/engine";
import { uniqueName } from "@sluice/testing";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestDeadLetterReplay } from "./request-dead-letter-replay";
import { browseDeadLetters } from "./browse-dead-letters";
import { findBatchProgress } from "../progress/find-batch-progress";
import { discardDeadLetters } from "./discard-dead-letters";

let fx: EngineFixture;
let db: PrismaClient;
const who = { actorUserId: null, actor: "operator@sluice.local", from: { origin: "web" as const } };
const HOUR = 3_600_000;

beforeAll(async () => {
  fx = await createEngineFixture("replay");
  db = createPrismaClient(fx.db.url);
});
afterAll(async () => {
  await db?.$disconnect();
  await fx?.close();
});

/** A topic of its own with these events (each an object; `amount` as given), all on partition i % 2. */
async function topicWith(events: Record<string, unknown>[]): Promise<string> {
  const topic = uniqueName("replay");
  const admin = fx.kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = fx.kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  await producer.send({
    topic,
    acks: -1,
    messages: events.map((e, i) => ({
      partition: i % 2,
      key: String(e.merchant_id),
      value: JSON.stringify(e),
    })),
  });
  await producer.disconnect();
  return topic;
}

function payment(id: string, amount: unknown, eventTime: Date, merchant = "m1") {
  return {
    event_id: id,
    type: "settlement",
    merchant_id: merchant,
    customer_id: "c1",
    payment_id: `p-${id}`,
    seq: 1,
    amount,
    currency: "EUR",
    card_country: "DE",
    event_time: eventTime.toISOString(),
  };
}

/** v1 takes amounts as double (a string amount is quarantined); v2 as decimal (the fix). */
function ledgerVersions(topic: string, name: string, table: string): [TPipelineSpec, TPipelineSpec] {
  const base = ledgerSpec(topic);
  const v = (amount: string) =>
    ledgerSpec(topic, {
      name,
      contract: { ...base.contract, fields: { ...base.contract.fields, amount } },
      sink: { postgres: { table } },
      expectations: [],
    });
  return [v("double"), v("decimal")];
}

/**
 * Version 2 after version 1 has run: the operator altered the column with the contract — in version
 * 1's physical table, with the serving view (which version 2's registration makes again) out of the way.
 */
async function fixContract(table: string, v2: TPipelineSpec): Promise<string> {
  const physical = await fx.pool.query<{ physical: string }>(
    `SELECT v.sink_tables ->> ('public.' || $1::text) AS physical FROM pipeline_versions v
       JOIN pipelines p ON p.serving_version_id = v.id WHERE v.sink_tables ? ('public.' || $1::text)`,
    [table],
  );
  await fx.pool.query(`DROP VIEW "${table}"`);
  await fx.pool.query(
    `ALTER TABLE sluice_sinks."${physical.rows[0]!.physical}" ALTER COLUMN amount TYPE numeric`,
  );
  return (await registerPipelineVersion(fx.pool, v2)).pipelineVersionId;
}

const sinkIds = async (table: string) =>
  (await fx.pool.query<{ event_id: string }>(`SELECT event_id FROM "${table}" ORDER BY event_id`)).rows.map(
    (r) => r.event_id,
  );
const checkpoint = async (pv: string) =>
  (
    await fx.pool.query<{ end_offsets: unknown; watermark: Date | null; last_batch_id: string }>(
      `SELECT end_offsets, watermark, last_batch_id FROM checkpoints WHERE pipeline_version_id = $1`,
      [pv],
    )
  ).rows[0]!;
const items = async (replayId: number) =>
  (
    await fx.pool.query<{
      dead_letter_id: string;
      status: string;
      outcome: string | null;
      batch_id: string | null;
      again_dead_letter_id: string | null;
    }>(
      `SELECT dead_letter_id, status, outcome, batch_id, again_dead_letter_id FROM dead_letter_replay_items WHERE replay_id = $1 ORDER BY dead_letter_id`,
      [replayId],
    )
  ).rows;

describe("dead-letter replay", () => {
  it("replays quarantined rows into the fixed version exactly once, refuses them the second time, and never moves offsets or the watermark", async () => {
    const now = new Date();
    const events = Array.from({ length: 21 }, (_, i) =>
      payment(`e-${String(i).padStart(2, "0")}`, i === 20 ? "n/a" : i % 2 === 0 ? 12.5 : "12.50", now),
    );
    const topic = await topicWith(events);
    const [v1, v2] = ledgerVersions(topic, "replay-ledger", "replay_ledger");
    const { pipelineVersionId: pv1 } = await drainPipeline(fx, v1);
    const quarantinedIds = events.filter((_, i) => i % 2 === 1 || i === 20).map((e) => e.event_id);
    expect(await sinkIds("replay_ledger")).toEqual(
      events.filter((_, i) => i % 2 === 0 && i !== 20).map((e) => e.event_id),
    );
    const dl = (
      await fx.pool.query<{ id: string; reason: string; event_id: string }>(
        `SELECT id, reason, payload->>'event_id' AS event_id FROM dead_letters WHERE pipeline_version_id = $1 ORDER BY id`,
        [pv1],
      )
    ).rows;
    expect(dl.map((d) => d.event_id).sort()).toEqual(quarantinedIds);

    const pv2 = await fixContract("replay_ledger", v2);
    const before = await checkpoint(pv2);
    // "All with this reason": the group the dead letters panel shows for a double field given a string.
    const group = dl[0]!.reason.replace(/, got .*$/, ", got …");
    expect(group).toBe('field "amount" should be double, got …');
    const first = await requestDeadLetterReplay(db, who, {
      pipeline: "replay-ledger",
      reasonGroup: group,
      outcome: "quarantined",
      note: "amount is decimal now",
    });
    expect(first).toMatchObject({ version: 2, accepted: 11, refused: [] });
    // Asked again before it ran: every row is refused, as pending, and nothing more is queued.
    const again = await requestDeadLetterReplay(db, who, {
      pipeline: "replay-ledger",
      ids: dl.map((d) => Number(d.id)),
      note: "twice",
    });
    expect(again!.accepted).toBe(0);
    expect(again!.replayId).toBeNull();
    expect(again!.refused.map((r) => r.why)).toEqual(
      dl.map(() =>
        expect.stringMatching(
          new RegExp(
            `^a replay is already pending \\(request #${first!.replayId} by operator@sluice\\.local`,
          ),
        ),
      ),
    );

    const progress = await drainRunner(
      await PipelineRunner.open(fx.resources, { pipelineVersionId: pv2, spec: v2, owner: "replay-test" }),
    );
    expect(progress).toHaveLength(1);
    const replayBatch = progress[0]!;
    expect(replayBatch.deadLetterReplay).toEqual({ replayIds: [first!.replayId], rows: 11 });
    expect(replayBatch.sources).toEqual([]);
    expect(replayBatch.outcomes).toMatchObject({ sink: 10, quarantined: 1, duplicate: 0 });
    // Every event id exactly once: the ten fixed ones replayed, the bad one still not.
    expect(await sinkIds("replay_ledger")).toEqual(events.filter((_, i) => i !== 20).map((e) => e.event_id));
    const after = await checkpoint(pv2);
    expect(after.end_offsets).toEqual(before.end_offsets);
    expect(after.watermark).toEqual(before.watermark);
    expect(Number(after.last_batch_id)).toBe(Number(before.last_batch_id) + 1);

    // The batch drill-down says what it was.
    const batches = await findBatchProgress(db, { pipeline: "replay-ledger" });
    expect(batches!.batches[0]).toMatchObject({
      batchId: replayBatch.batchId,
      inputRows: 11,
      deadLetterReplay: { replayIds: [first!.replayId], rows: 11 },
    });

    const applied = await items(first!.replayId!);
    expect(applied.map((i) => [i.status, i.outcome, Number(i.batch_id)])).toEqual(
      dl.map((d) => ["applied", d.event_id === "e-20" ? "quarantined" : "sink", replayBatch.batchId]),
    );
    // The row that failed again has a dead letter of version 2, which is the one to replay now.
    const repeat = applied.find((i) => i.outcome === "quarantined")!;
    const newDl = (
      await fx.pool.query<{ id: string; reason: string }>(
        `SELECT id, reason FROM dead_letters WHERE pipeline_version_id = $1`,
        [pv2],
      )
    ).rows;
    expect(newDl).toEqual([
      { id: repeat.again_dead_letter_id, reason: 'field "amount" should be decimal, got "n/a"' },
    ]);

    const third = await requestDeadLetterReplay(db, who, {
      pipeline: "replay-ledger",
      ids: dl.map((d) => Number(d.id)),
      note: "once more",
    });
    expect(third!.accepted).toBe(0);
    const why = new Map(third!.refused.map((r) => [r.id, r.why]));
    for (const d of dl) {
      expect(why.get(Number(d.id))).toMatch(
        d.event_id === "e-20"
          ? new RegExp(
              `^already replayed into batch ${replayBatch.batchId} of version 2 by operator@sluice\\.local at .* and failed again .*; replay its new dead letter #${repeat.again_dead_letter_id} instead$`,
            )
          : new RegExp(
              `^already replayed into batch ${replayBatch.batchId} of version 2 by operator@sluice\\.local at \\S+ \\(sink\\)$`,
            ),
      );
    }
    // The panel shows every version's rows with their replay status: version 1's replayed into the replay
    // batch, version 2's only row the repeat, not replayed; the audit has every request, refusals too.
    const page = (await browseDeadLetters(db, { pipeline: "replay-ledger", limit: 200 }))!;
    expect(page.rows.filter((r) => r.version === 2).map((r) => [r.id, r.replay])).toEqual([
      [Number(repeat.again_dead_letter_id), null],
    ]);
    expect(
      page.rows
        .filter((r) => r.version === 1)
        .map((r) => [r.replay?.status, r.replay?.batchId, r.replay?.version, r.replay?.by]),
    ).toEqual(dl.map(() => ["applied", replayBatch.batchId, 2, "operator@sluice.local"]));
    const audit = await db.auditEvent.findMany({
      where: { action: "deadletter.replay", targetLabel: "replay-ledger" },
      orderBy: { id: "asc" },
    });
    expect(audit.map((a) => [a.outcome, a.reason])).toEqual([
      ["succeeded", "amount is decimal now"],
      ["refused", "twice"],
      ["refused", "once more"],
    ]);

    // Behind the service's back (no refusal): the same dead letters queued once more reach the sink
    // once — the replay batch finds their keys in dedup state and records them as duplicates.
    const sneaky = await db.deadLetterReplay.create({
      data: {
        pipelineId: (await db.pipeline.findUniqueOrThrow({ where: { name: "replay-ledger" } })).id,
        pipelineVersionId: pv2,
        actor: "test",
        note: "bypass",
        selection: {},
        accepted: 10,
        refused: [],
      },
    });
    const fixedIds = dl.filter((d) => d.event_id !== "e-20").map((d) => d.id);
    for (const id of fixedIds)
      await db.deadLetterReplayItem.create({
        data: { replayId: sneaky.id, deadLetterId: BigInt(id), pipelineVersionId: pv2 },
      });
    const second = await drainRunner(
      await PipelineRunner.open(fx.resources, { pipelineVersionId: pv2, spec: v2, owner: "replay-test" }),
    );
    expect(second.map((p) => p.outcomes)).toEqual([expect.objectContaining({ sink: 0, duplicate: 10 })]);
    expect((await items(Number(sneaky.id))).map((i) => i.outcome)).toEqual(fixedIds.map(() => "duplicate"));
    expect(await sinkIds("replay_ledger")).toEqual(events.filter((_, i) => i !== 20).map((e) => e.event_id));

    // The repeat's own dead letter (version 2) can be replayed; while that is pending it cannot be discarded.
    const repeatId = Number(repeat.again_dead_letter_id);
    expect(
      await requestDeadLetterReplay(db, who, {
        pipeline: "replay-ledger",
        ids: [repeatId],
        note: "try again",
      }),
    ).toMatchObject({ accepted: 1, refused: [] });
    expect(
      await discardDeadLetters(db, who, {
        pipeline: "replay-ledger",
        ids: [repeatId],
        reason: "changed my mind",
      }),
    ).toEqual({ discarded: 0, alreadyResolved: 1, more: false });
    expect(await db.deadLetterResolution.count({ where: { deadLetterId: BigInt(repeatId) } })).toBe(0);
  });

  it("a windowed pipeline refuses rows whose window is final and evicted, naming why; the rows it accepts land in their open window", async () => {
    const base = new Date(Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR);
    const at = (min: number) => new Date(base.getTime() + min * 60_000);
    // Quarantined (string amount): one at minute 1 (its window [0, 5) will be final), one at minute 62
    // (window [60, 65) still open). Good rows move the watermark to 60: partition 0 has read up to
    // minute 63, partition 1 up to 61 (its quarantined row does not count), minus watermarkDelay 1m.
    const events = [
      payment("w-old", "1.00", at(1)),
      payment("w-open", "1.00", at(62)),
      payment("w-a", 1, at(0)),
      payment("w-b", 1, at(61)),
      payment("w-c", 1, at(63)),
    ];
    const topic = await topicWith(events);
    const spec = (amount: string) => {
      const b = ledgerSpec(topic);
      return ledgerSpec(topic, {
        name: "replay-windows",
        contract: { ...b.contract, fields: { ...b.contract.fields, amount } },
        eventTime: { column: "event_time", watermarkDelay: "1m", idleTimeout: "1h" },
        expectations: [],
        aggregate: {
          window: { tumbling: "5m" },
          groupBy: ["merchant_id"],
          measures: { events: "count()" },
          outputMode: "update",
          allowedLateness: "0m",
        },
        sink: { postgres: { table: "replay_windows" } },
      });
    };
    const { pipelineVersionId: pv1 } = await drainPipeline(fx, spec("double"));
    const dl = (
      await fx.pool.query<{ id: string; event_id: string }>(
        `SELECT id, payload->>'event_id' AS event_id FROM dead_letters WHERE pipeline_version_id = $1 ORDER BY event_id`,
        [pv1],
      )
    ).rows;
    expect(dl.map((d) => d.event_id)).toEqual(["w-old", "w-open"]);
    const v2 = spec("decimal");
    const { pipelineVersionId: pv2 } = await registerPipelineVersion(fx.pool, v2);
    const watermark = (await checkpoint(pv2)).watermark!;
    expect(watermark).toEqual(at(60));

    const res = await requestDeadLetterReplay(db, who, {
      pipeline: "replay-windows",
      ids: dl.map((d) => Number(d.id)),
      note: "amount is decimal now",
    });
    expect(res!.accepted).toBe(1);
    expect(res!.refused).toEqual([
      {
        id: Number(dl[0]!.id),
        why: `its window is already final and evicted (event time ${at(1).toISOString()} is behind the watermark ${at(60).toISOString()} of version 2): replayed, it would be dropped as late, or count in a window already emitted`,
      },
    ]);
    const progress = await drainRunner(
      await PipelineRunner.open(fx.resources, { pipelineVersionId: pv2, spec: v2, owner: "replay-test" }),
    );
    expect(progress.map((p) => [p.deadLetterReplay?.rows, p.outcomes.sink, p.watermark])).toEqual([
      [1, 1, at(60).toISOString()],
    ]);
    const windows = await fx.pool.query<{ window_start: Date; events: number }>(
      `SELECT window_start, events::int FROM replay_windows ORDER BY window_start`,
    );
    // [0,5): w-a only (w-old refused); [60,65): w-b, w-c and the replayed w-open.
    expect(windows.rows.map((w) => [w.window_start.toISOString(), w.events])).toEqual([
      [at(0).toISOString(), 1],
      [at(60).toISOString(), 3],
    ]);
  });

  it("a runner killed inside the replay batch's commit applied it not at all; the next run applies it exactly once", async () => {
    const events = Array.from({ length: 12 }, (_, i) =>
      payment(`k-${String(i).padStart(2, "0")}`, i % 3 === 0 ? "5.00" : 5, new Date()),
    );
    const topic = await topicWith(events);
    const [v1, v2] = ledgerVersions(topic, "replay-crash", "replay_crash");
    await drainPipeline(fx, v1);
    const pv2 = await fixContract("replay_crash", v2);
    const req = await requestDeadLetterReplay(db, who, {
      pipeline: "replay-crash",
      reasonGroup: 'field "amount" should be double, got …',
      note: "crash test",
    });
    expect(req!.accepted).toBe(4);
    const sinkBefore = await sinkIds("replay_crash");
    expect(sinkBefore).toHaveLength(8);

    // Hold the items: the runner's commit transaction writes the sink rows, then waits on them.
    const blocker = new pg.Client({ connectionString: fx.db.url });
    await blocker.connect();
    await blocker.query("BEGIN");
    await blocker.query(`SELECT id FROM dead_letter_replay_items WHERE replay_id = $1 FOR UPDATE`, [
      req!.replayId,
    ]);
    const specs = await specDir();
    try {
      const child = spawnSluice(
        ["run", await specs.write("crash", v2 as unknown as Record<string, unknown>), "--until-caught-up"],
        { databaseUrl: fx.db.url },
      );
      // Wait until its commit is inside markReplayed (after the sink insert), blocked on our lock.
      for (;;) {
        const waiting = await fx.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE dead_letter_replay_items%'`,
        );
        if (waiting.rowCount) break;
        const exited = await Promise.race([child.exited, new Promise((r) => setTimeout(() => r(null), 100))]);
        if (exited) throw new Error(`the runner exited before its commit: ${child.stderr.join("\n")}`);
      }
      child.child.kill("SIGKILL");
      expect((await child.exited).signal).toBe("SIGKILL");
    } finally {
      await blocker.query("ROLLBACK");
      await blocker.end();
      await specs.cleanup();
    }
    // The killed transaction rolls back once its backend notices: wait until no backend holds it.
    for (;;) {
      const left = await fx.pool.query(
        `SELECT 1 FROM pg_stat_activity WHERE query LIKE 'UPDATE dead_letter_replay_items%' AND state <> 'idle'`,
      );
      if (!left.rowCount) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // Not at all: nothing in the sink, every item pending, the plan recorded for a re-run.
    expect(await sinkIds("replay_crash")).toEqual(sinkBefore);
    expect((await items(req!.replayId!)).map((i) => i.status)).toEqual([
      "pending",
      "pending",
      "pending",
      "pending",
    ]);
    const cp = await checkpoint(pv2);
    const plan = await fx.pool.query<{ replay: { itemIds: number[] } | null }>(
      `SELECT replay FROM offset_log WHERE pipeline_version_id = $1 AND batch_id = $2`,
      [pv2, Number(cp.last_batch_id) + 1],
    );
    expect(plan.rows[0]!.replay!.itemIds).toHaveLength(4);

    // Then exactly once: the re-run applies the recorded plan; the sink holds every id once.
    const progress = await drainRunner(
      await PipelineRunner.open(fx.resources, { pipelineVersionId: pv2, spec: v2, owner: "replay-test" }),
    );
    expect(progress.map((p) => [p.batchId, p.replayed, p.deadLetterReplay?.rows, p.outcomes.sink])).toEqual([
      [Number(cp.last_batch_id) + 1, true, 4, 4],
    ]);
    expect(await sinkIds("replay_crash")).toEqual(events.map((e) => e.event_id));
    expect((await items(req!.replayId!)).map((i) => [i.status, i.outcome])).toEqual(
      Array.from({ length: 4 }, () => ["applied", "sink"]),
    );
  });

  it("a replayed row that violates a `fail` expectation is left out, with why, instead of stopping the pipeline", async () => {
    const events = [
      payment("f-0", 1, new Date()),
      payment("f-1", "2.00", new Date()),
      { ...payment("f-2", "3.00", new Date()), currency: "XXX" },
    ];
    const topic = await topicWith(events);
    const base = ledgerSpec(topic);
    const v = (amount: string, expectations: unknown[]) =>
      ledgerSpec(topic, {
        name: "replay-fail",
        contract: { ...base.contract, fields: { ...base.contract.fields, amount } },
        sink: { postgres: { table: "replay_fail" } },
        expectations,
      });
    await drainPipeline(fx, v("double", []));
    const v2 = v("decimal", [{ name: "real_currency", expr: "currency != 'XXX'", action: "fail" }]);
    const pv2 = await fixContract("replay_fail", v2);
    const req = await requestDeadLetterReplay(db, who, {
      pipeline: "replay-fail",
      reasonGroup: 'field "amount" should be double, got …',
      note: "fixed",
    });
    expect(req!.accepted).toBe(2);
    const progress = await drainRunner(
      await PipelineRunner.open(fx.resources, { pipelineVersionId: pv2, spec: v2, owner: "replay-test" }),
    );
    expect(progress.map((p) => [p.deadLetterReplay?.rows, p.outcomes.sink])).toEqual([[1, 1]]);
    expect(await sinkIds("replay_fail")).toEqual(["f-0", "f-1"]);
    const outcomes = (await items(req!.replayId!)).map((i) => `${i.status} ${i.outcome}`).sort();
    expect(outcomes).toEqual(["applied refused", "applied sink"]);
    const detail = (
      await fx.pool.query<{ detail: string }>(
        `SELECT detail FROM dead_letter_replay_items WHERE replay_id = $1 AND outcome = 'refused'`,
        [req!.replayId],
      )
    ).rows[0]!.detail;
    expect(detail).toBe('violates expectation "real_currency" (action: fail): not replayed');
    expect(
      await fx.pool.query(`SELECT 1 FROM batch_failures WHERE pipeline_version_id = $1`, [pv2]),
    ).toMatchObject({ rowCount: 0 });
  });

  it("a version registered with fresh state cancels the replaced version's pending replays and refuses its rows", async () => {
    const events = [
      payment("s-0", 1, new Date()),
      payment("s-1", "2.00", new Date()),
      payment("s-2", "3.00", new Date()),
    ];
    const topic = await topicWith(events);
    const [v1, v2] = ledgerVersions(topic, "replay-fresh", "replay_fresh");
    await drainPipeline(fx, v1);
    const pending = await requestDeadLetterReplay(db, who, {
      pipeline: "replay-fresh",
      reasonGroup: 'field "amount" should be double, got …',
      note: "before the rebuild",
    });
    expect(pending!.accepted).toBe(2);
    // A rebuild in place: version 2 re-reads the topic from its starting offsets, these rows included.
    const rebuilt = await registerPipelineVersion(fx.pool, v2, { continueFromPrevious: false });
    expect(rebuilt.replaced?.version).toBe(1);
    const cancelled = await items(pending!.replayId!);
    expect(cancelled.map((i) => [i.status, i.outcome, i.batch_id])).toEqual([
      ["applied", "refused", null],
      ["applied", "refused", null],
    ]);
    const again = await requestDeadLetterReplay(db, who, {
      pipeline: "replay-fresh",
      reasonGroup: 'field "amount" should be double, got …',
      note: "after the rebuild",
    });
    expect(again!.accepted).toBe(0);
    expect(again!.refused.map((r) => r.why)).toEqual(
      [1, 2].map(
        () =>
          "it is a row of version 1, whose checkpoint version 2 does not continue (registered with fresh state, it reads the topic on its own): replayed, it could be applied twice",
      ),
    );
  });

  it("refuses rows a checkpoint reset rewound over after they were dead-lettered (they were read again)", async () => {
    const events = [
      payment("r-0", "1.00", new Date()),
      payment("r-1", "2.00", new Date()),
      payment("r-2", 3, new Date()),
      payment("r-3", "4.00", new Date()),
    ];
    const topic = await topicWith(events);
    const [v1, v2] = ledgerVersions(topic, "replay-rewound", "replay_rewound");
    const { pipelineVersionId: pv1 } = await drainPipeline(fx, v1);
    const pv2 = await fixContract("replay_rewound", v2);
    const dl = (
      await fx.pool.query<{ id: string; partition: number; offset: string }>(
        `SELECT id, partition, "offset" FROM dead_letters WHERE pipeline_version_id = $1 ORDER BY partition, "offset"`,
        [pv1],
      )
    ).rows;
    // r-0, r-2 on partition 0 (offsets 0, 1), r-1, r-3 on partition 1 (offsets 0, 1): dead letters r-0 (0:0), r-1 (1:0), r-3 (1:1).
    expect(dl.map((d) => `${d.partition}:${d.offset}`)).toEqual(["0:0", "1:0", "1:1"]);
    // Version 2 was reset to partition 1 offset 1 (as apply-checkpoint-reset records it): 1:1 is read again, 1:0 and 0:0 are not.
    await fx.pool.query(
      `INSERT INTO checkpoint_resets (pipeline_version_id, change_request_id, after_batch_id, offsets_before, offsets_after, state_cleared, requested_by, approved_by)
       VALUES ($1, 990001, 0, '{"0": 2, "1": 2}', '{"0": 2, "1": 1}', false, 'a@sluice.local', 'b@sluice.local')`,
      [pv2],
    );
    const res = await requestDeadLetterReplay(db, who, {
      pipeline: "replay-rewound",
      ids: dl.map((d) => Number(d.id)),
      note: "after the reset",
    });
    expect(res!.accepted).toBe(2);
    expect(res!.refused).toEqual([
      {
        id: Number(dl[2]!.id),
        why: expect.stringMatching(
          /^a checkpoint reset at \S+ rewound partition 1 to or before offset 1: the row was read again after it was dead-lettered/,
        ),
      },
    ]);
  });
});
