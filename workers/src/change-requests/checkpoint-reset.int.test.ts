// Guarantee: a checkpoint reset is asked for by one person, refused to that person's own approval,
// approved by another and applied exactly once while a worker keeps running the pipeline — and a
// crash in the middle of applying it (the approving process SIGKILLed inside its transaction, after
// the checkpoint was rewritten) leaves it not applied at all. Afterwards the ledger holds each event
// id exactly once, the batches read every offset up to the reset once, then again from the reset's
// offsets (the discontinuity recorded in checkpoint_resets), to the end of the topic.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PaymentProducer } from "@sluice/producer";
import {
  approveChangeRequest,
  ChangeRequestError,
  kafkaTopicOffsets,
  requestCheckpointReset,
  type TAuditWho,
} from "@sluice/services";
import { createFleetHarness, type FleetHarness } from "../testing/fleet-harness";
import { startFleet, topicEnds, waitFleetCaughtUp, type FleetPipeline } from "../testing/pipeline-fleet";
import { approveAndKillBeforeCommit } from "../testing/kill-approval";
import { isStarted } from "../testing/worker-process";

let h: FleetHarness;
let requester: TAuditWho;
let approver: TAuditWho;
beforeAll(async () => {
  h = await createFleetHarness("cp_reset", { extraTopics: 0 });
  const mk = async (email: string) => ({
    actorUserId: (await h.db.user.create({ data: { email, name: email, role: "operator" } })).id,
    actor: email,
    from: { origin: "web" as const },
  });
  requester = await mk("ria.requester@sluice.local");
  approver = await mk("abe.approver@sluice.local");
});
afterAll(async () => {
  await h?.close();
});

describe("checkpoint reset on a running ledger", () => {
  it(
    "requested by one operator, refused to their own approval, survives a crash mid-apply, applied once by another: the ledger stays exact",
    { timeout: 240_000 },
    async () => {
      const { fx } = h;
      const producer = new PaymentProducer({
        topic: fx.topic,
        kafka: fx.kafka,
        seed: 11,
        duplicateShare: 0.05,
        malformedShare: 0.01,
        outOfOrderShare: 0.05,
        manifest: "ids",
        log: () => undefined,
      });
      await producer.ensureTopic(3);
      await producer.produce({ count: 1500 });
      await sleep(1100);
      const resetTo = new Date();
      await sleep(1100);
      await producer.produce({ count: 1500 });

      const worker = h.spawnWorker();
      await worker.waitForLog(isStarted);
      const [p] = (await startFleet(fx.pool, h.db, h.queue, [
        { name: "reset-ledger", topic: fx.topic, maxOffsetsPerTrigger: 400, every: "300ms" },
      ])) as [FleetPipeline];
      await waitFleetCaughtUp(fx.pool, fx.kafka, [p], 90_000);

      const offsets = kafkaTopicOffsets(fx.kafka);
      const cr = await requestCheckpointReset(h.db, offsets, requester, {
        pipeline: p.name,
        to: { kind: "timestamp", at: resetTo },
        state: "keep",
        reason: "re-read since the upstream fix",
      });
      expect(cr).toMatchObject({ status: "pending", requestedBy: requester.actor });
      const impact = cr.impact as {
        reprocessed: number;
        result: string;
        partitions: { partition: number; target: number }[];
      };
      expect(impact.result).toMatch(/^harmless for an append ledger/);
      const byTime = await offsets.forTimestamp(fx.topic, resetTo);
      expect(Object.fromEntries(impact.partitions.map((x) => [x.partition, x.target]))).toEqual(byTime);
      const ends = await topicEnds(fx.kafka, fx.topic);
      expect(impact.reprocessed).toBe(
        Object.entries(ends).reduce((n, [part, end]) => n + end - byTime[Number(part)]!, 0),
      );

      // Four-eyes: the requester may not approve, whatever their role.
      await expect(approveChangeRequest(h.db, requester, { id: cr.id, pipeline: p.name })).rejects.toThrow(
        ChangeRequestError,
      );
      await expect(approveChangeRequest(h.db, requester, { id: cr.id, pipeline: p.name })).rejects.toThrow(
        /someone else must approve it \(four-eyes rule, whatever your role\)/,
      );

      // More events arrive while the pipeline runs; the approving process dies inside its transaction.
      const running = producer.run({
        ratePerSecond: 200,
        signal: AbortSignal.timeout(6000),
        progressIntervalMs: 0,
      });
      await approveAndKillBeforeCommit({
        databaseUrl: fx.db.url,
        pool: fx.pool,
        changeRequestId: cr.id,
        pipeline: p.name,
        approver,
      });
      expect((await h.db.changeRequest.findUniqueOrThrow({ where: { id: BigInt(cr.id) } })).status).toBe(
        "pending",
      );
      expect(await h.db.checkpointReset.count()).toBe(0);
      expect(
        await h.db.auditEvent.count({
          where: { action: { in: ["change.approve", "change.apply"] }, outcome: "succeeded" },
        }),
      ).toBe(0);
      expect(
        (
          await fx.pool.query(`SELECT lease_owner FROM checkpoints WHERE pipeline_version_id = $1`, [
            p.pipelineVersionId,
          ])
        ).rows[0].lease_owner,
      ).not.toMatch(/^change-request:/);

      // Approved by someone else, twice (a double click): applied once.
      const [first, second] = await Promise.all([
        approveChangeRequest(h.db, approver, { id: cr.id, pipeline: p.name, note: "looks right" }),
        approveChangeRequest(h.db, approver, { id: cr.id, pipeline: p.name, note: "looks right" }),
      ]);
      expect([first.status, second.status]).toEqual(["applied", "applied"]);
      const resets = await h.db.checkpointReset.findMany();
      expect(resets).toHaveLength(1);
      expect(await h.db.auditEvent.count({ where: { action: "change.apply" } })).toBe(1);
      await running;
      await waitFleetCaughtUp(fx.pool, fx.kafka, [p], 90_000);

      // The ledger: every valid event id of the manifest exactly once.
      const manifest = producer.manifest();
      const ids = (await fx.pool.query<{ event_id: string }>(`SELECT event_id FROM "${p.table}"`)).rows.map(
        (r) => r.event_id,
      );
      expect(ids.length).toBe(new Set(ids).size);
      expect(new Set(ids)).toEqual(new Set(manifest.eventIds));

      // Batches tile each partition up to the reset, then again from the reset's offsets to the end.
      const reset = resets[0]!;
      const batches = await fx.pool.query<{
        batch_id: string;
        progress: { sources: { partition: number; startOffset: number; endOffset: number }[] };
      }>(`SELECT batch_id, progress FROM batch_log WHERE pipeline_version_id = $1 ORDER BY batch_id`, [
        p.pipelineVersionId,
      ]);
      const next = new Map<number, number>();
      let rewound = false;
      for (const b of batches.rows) {
        if (!rewound && Number(b.batch_id) > Number(reset.afterBatchId)) {
          expect(Object.fromEntries(next)).toEqual(
            Object.fromEntries(
              Object.entries(reset.offsetsBefore as Record<string, number>).map(([k, v]) => [Number(k), v]),
            ),
          );
          for (const [k, v] of Object.entries(reset.offsetsAfter as Record<string, number>))
            next.set(Number(k), v);
          rewound = true;
        }
        for (const s of b.progress.sources) {
          expect({ batch: b.batch_id, partition: s.partition, start: s.startOffset }).toEqual({
            batch: b.batch_id,
            partition: s.partition,
            start: next.get(s.partition) ?? 0,
          });
          next.set(s.partition, s.endOffset);
        }
      }
      expect(rewound).toBe(true);
      expect(Object.fromEntries([...next].map(([k, v]) => [String(k), v]))).toEqual(
        await topicEnds(fx.kafka, fx.topic),
      );
      const dups = await fx.pool.query<{ n: string }>(
        `SELECT sum((outcomes->>'duplicate')::int)::text AS n FROM batch_log WHERE pipeline_version_id = $1 AND batch_id > $2`,
        [p.pipelineVersionId, reset.afterBatchId],
      );
      expect(Number(dups.rows[0]!.n)).toBeGreaterThanOrEqual(impact.reprocessed - manifest.counts.malformed);
    },
  );
});
