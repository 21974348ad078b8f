// Guarantee: a running ledger whose producer starts sending a new field raises ONE schema change
// request by itself (the worker, after each committed batch with drift; later batches add to its
// counts), and approving it — with the worker running the pipeline all along — registers the new
// version at a batch boundary exactly once: the approving process SIGKILLed inside its transaction
// leaves nothing applied (one version, the old run still running, no new column); approved again, the
// new version continues from the old checkpoint's offsets, the worker runs it, and the ledger holds
// every produced event id exactly once, the new field in its own column from then on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PaymentProducer } from "@sluice/producer";
import { approveChangeRequest, type TAppliedSchemaChange, type TAuditWho } from "@sluice/services";
import { waitFor } from "@sluice/testing";
import { createFleetHarness, type FleetHarness } from "../testing/fleet-harness";
import { startFleet, waitFleetCaughtUp, type FleetPipeline } from "../testing/pipeline-fleet";
import { approveAndKillBeforeCommit } from "../testing/kill-approval";
import { isStarted } from "../testing/worker-process";

let h: FleetHarness;
let approver: TAuditWho;
beforeAll(async () => {
  h = await createFleetHarness("schema_drift", { extraTopics: 0 });
  approver = {
    actorUserId: (
      await h.db.user.create({ data: { email: "ola.operator@sluice.local", name: "Ola", role: "operator" } })
    ).id,
    actor: "ola.operator@sluice.local",
    from: { origin: "web" },
  };
});
afterAll(async () => {
  await h?.close();
});

type TObserved = { field: string; count: number; samples: { event_id: string }[] };

describe("schema drift on a running ledger", () => {
  it(
    "raises one request, survives a crash mid-apply, and is applied once from the same offsets: the ledger stays exact",
    { timeout: 240_000 },
    async () => {
      const { fx } = h;
      const clean = new PaymentProducer({
        topic: fx.topic,
        kafka: fx.kafka,
        seed: 31,
        duplicateShare: 0.05,
        malformedShare: 0,
        manifest: "ids",
        log: () => undefined,
      });
      await clean.ensureTopic(3);
      await clean.produce({ count: 600 });
      const worker = h.spawnWorker();
      await worker.waitForLog(isStarted);
      const [p] = (await startFleet(fx.pool, h.db, h.queue, [
        { name: "drift-ledger", topic: fx.topic, maxOffsetsPerTrigger: 150, every: "300ms" },
      ])) as [FleetPipeline];
      await waitFleetCaughtUp(fx.pool, fx.kafka, [p], 90_000);
      expect(await h.db.changeRequest.count()).toBe(0);

      // The producer starts sending a field the contract does not declare, over several batches.
      const drifting = new PaymentProducer({
        topic: fx.topic,
        kafka: fx.kafka,
        seed: 32,
        duplicateShare: 0,
        malformedShare: 0,
        extraFields: { channel: "web" },
        manifest: "ids",
        log: () => undefined,
      });
      await drifting.produce({ count: 400 });
      await waitFleetCaughtUp(fx.pool, fx.kafka, [p], 90_000);
      const raised = await waitFor(
        "the worker's schema change request to count every drifted row",
        async () => {
          const rows = await h.db.changeRequest.findMany({ where: { kind: "schema_change" } });
          const obs = rows.map((r) =>
            (r.payload as { observed: TObserved[] }).observed.find((o) => o.field === "channel"),
          );
          return rows.length === 1 && obs[0]?.count === 400 ? rows[0]! : undefined;
        },
        30_000,
        300,
      );
      expect(raised).toMatchObject({
        requestedBy: "system",
        requestedById: null,
        status: "pending",
        pipelineVersionId: p.pipelineVersionId,
      });
      // 400 drifted rows at most 150 per batch: that count is summed over at least three batches' observations.
      const driftIds = new Set(drifting.manifest().eventIds);
      for (const s of (raised.payload as { observed: TObserved[] }).observed[0]!.samples)
        expect(driftIds.has(s.event_id)).toBe(true);

      // The approving process dies inside its transaction, after registering the new version.
      await approveAndKillBeforeCommit({
        databaseUrl: fx.db.url,
        pool: fx.pool,
        changeRequestId: raised.id,
        pipeline: p.name,
        approver,
      });
      expect((await h.db.changeRequest.findUniqueOrThrow({ where: { id: raised.id } })).status).toBe(
        "pending",
      );
      expect(await h.db.pipelineVersion.count()).toBe(1);
      expect(
        (await h.db.pipelineRun.findUniqueOrThrow({ where: { pipelineVersionId: p.pipelineVersionId } }))
          .status,
      ).toBe("running");
      expect(
        (
          await fx.pool.query(
            `SELECT 1 FROM information_schema.columns WHERE table_name = $1 AND column_name = 'channel'`,
            [p.table],
          )
        ).rowCount,
      ).toBe(0);
      expect(await h.db.auditEvent.count({ where: { action: "change.apply" } })).toBe(0);

      // More drifted events while the worker runs; then approved for real (a double click: applied once).
      const running = drifting.run({
        ratePerSecond: 200,
        signal: AbortSignal.timeout(4000),
        progressIntervalMs: 0,
      });
      const [a, b] = await Promise.all([
        approveChangeRequest(h.db, approver, { id: raised.id, pipeline: p.name }),
        approveChangeRequest(h.db, approver, { id: raised.id, pipeline: p.name }),
      ]);
      expect([a.status, b.status]).toEqual(["applied", "applied"]);
      expect(await h.db.pipelineVersion.count()).toBe(2);
      expect(await h.db.auditEvent.count({ where: { action: "change.apply" } })).toBe(1);
      const result = a.result as TAppliedSchemaChange;
      await running;
      const v2: FleetPipeline = { ...p, pipelineVersionId: result.pipelineVersionId };
      await waitFleetCaughtUp(fx.pool, fx.kafka, [v2], 90_000);

      // The new version started at the old checkpoint's offsets, and tiles the topic from there.
      const batches = await fx.pool.query<{
        progress: { sources: { partition: number; startOffset: number; endOffset: number }[] };
      }>(`SELECT progress FROM batch_log WHERE pipeline_version_id = $1 ORDER BY batch_id`, [
        v2.pipelineVersionId,
      ]);
      expect(batches.rows.length).toBeGreaterThan(0);
      const next = new Map(Object.entries(result.offsets).map(([k, v]) => [Number(k), v]));
      for (const row of batches.rows)
        for (const s of row.progress.sources) {
          expect({ partition: s.partition, start: s.startOffset }).toEqual({
            partition: s.partition,
            start: next.get(s.partition) ?? 0,
          });
          next.set(s.partition, s.endOffset);
        }
      expect(
        (await h.db.pipelineRun.findUniqueOrThrow({ where: { pipelineVersionId: p.pipelineVersionId } }))
          .status,
      ).toBe("stopped");

      // Exact: every produced id once; the drifted ones carry the field, in _rescued before, in its column after.
      const ids = (await fx.pool.query<{ event_id: string }>(`SELECT event_id FROM "${p.table}"`)).rows.map(
        (r) => r.event_id,
      );
      expect(ids.length).toBe(new Set(ids).size);
      const all = new Set([...clean.manifest().eventIds!, ...drifting.manifest().eventIds!]);
      expect(new Set(ids)).toEqual(all);
      const carried = await fx.pool.query<{ before: string; after: string }>(
        `SELECT count(*) FILTER (WHERE channel IS NULL AND _rescued->>'channel' = 'web')::text AS before, count(*) FILTER (WHERE channel = 'web')::text AS after FROM "${p.table}" WHERE event_id = ANY($1)`,
        [[...drifting.manifest().eventIds!]],
      );
      expect(Number(carried.rows[0]!.before) + Number(carried.rows[0]!.after)).toBe(
        drifting.manifest().eventIds!.size,
      );
      expect(Number(carried.rows[0]!.after)).toBeGreaterThan(0);
    },
  );
});
