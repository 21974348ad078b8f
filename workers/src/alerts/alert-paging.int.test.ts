// Alerts page the owning team once, with what they need — against the real services and real worker
// processes: two workers, a pipeline paused under a steady producer (so its backlog grows while input
// is steady), a real local HTTP receiver as the team's Slack contact point. The rule fires once and the
// receiver gets one Slack message naming the pipeline, value and link; reminders come while it is
// unacknowledged; the evaluating worker is SIGKILLed and the (private) Redis flushed mid-episode:
// the other worker takes the lease and carries on — no duplicate notification, no lost episode;
// acknowledging is announced once and stops reminders; resuming lets it catch up and resolves it with
// exactly one resolution.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import {
  acknowledgeAlert,
  createContactPoint,
  ensureDefaultRules,
  pausePipelineRun,
  resumePipelineRun,
} from "@sluice/services";
import { waitFor } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFleetHarness, type FleetHarness } from "../testing/fleet-harness";
import { startFleet, startProducers } from "../testing/pipeline-fleet";
import { startPrivateRedis, type PrivateRedis } from "../testing/private-redis";
import { isStarted } from "../testing/worker-process";

interface TReceived {
  key: string;
  body: {
    text: string;
    blocks: {
      type: string;
      text?: { text: string };
      fields?: { text: string }[];
      elements?: { text: string }[];
    }[];
  };
}

let redis: PrivateRedis;
let h: FleetHarness;
let receiver: http.Server;
const received: TReceived[] = [];

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ key: String(req.headers["x-sluice-notification"]), body: JSON.parse(body) });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/slack`;
  redis = await startPrivateRedis();
  h = await createFleetHarness("alerts", {
    extraTopics: 0,
    redisUrl: redis.url,
    workerEnv: {
      WORKER_ALERT_INTERVAL_MS: "1000",
      WORKER_ALERT_RETRY_BASE_MS: "200",
      WORKER_OFFSET_SAMPLE_INTERVAL_MS: "1000",
      SLUICE_PUBLIC_URL: "http://console.example:3000",
      PAYMENTS_ONCALL_URL: url,
    },
  });
});
afterAll(async () => {
  await h?.close();
  await redis?.stop();
  await new Promise((r) => receiver?.close(r));
});

const kinds = (list: TReceived[]) => list.map((r) => r.key.split(":")[2]);

describe("alert paging", () => {
  it(
    "a paused pipeline pages once, reminds until acknowledged, survives its evaluator's death and a Redis flush, and resolves once",
    { timeout: 400_000 },
    async () => {
      const producers = await startProducers(h.fx.kafka, [
        { topic: h.fx.topic, seed: 12, backlog: 200, ratePerSecond: 50 },
      ]);
      const workers = [h.spawnWorker(), h.spawnWorker()];
      await Promise.all(workers.map((w) => w.waitForLog(isStarted)));
      const [p] = await startFleet(h.fx.pool, h.db, h.queue, [
        { name: "alerts-ledger", topic: h.fx.topic, maxOffsetsPerTrigger: 5000, every: "1s" },
      ]);
      const team = await h.db.team.findUniqueOrThrow({ where: { slug: "payments-data" } });
      const contactPoint = await createContactPoint(
        h.db,
        {
          actor: { id: "u-admin", email: "admin@sluice.local", name: "Admin", role: "admin", teams: [] },
          from: { origin: "cli" },
        },
        {
          teamId: team.id,
          contactPoint: {
            name: "#payments-oncall",
            kind: "slack",
            secret: { from: "env", name: "PAYMENTS_ONCALL_URL" },
          },
        },
      );
      // Only the rule under test pages, with short durations (the defaults are minutes); reminders every 6 s.
      await ensureDefaultRules(h.db);
      await h.db.alertRule.updateMany({
        where: { pipeline: { name: p!.name }, kind: { not: "backlog_growing" } },
        data: { enabled: false },
      });
      await h.db.alertRule.updateMany({ where: { pipelineId: null }, data: { enabled: false } });
      await h.db.alertRule.updateMany({
        where: { pipeline: { name: p!.name }, kind: "backlog_growing" },
        data: { threshold: 2, forSeconds: 3, clearForSeconds: 5, repeatSeconds: 6 },
      });

      const episodes = () =>
        h.db.alertEpisode.findMany({
          where: { rule: { pipeline: { name: p!.name } } },
          orderBy: { id: "asc" },
        });
      await waitFor(
        "the pipeline to commit a batch",
        async () =>
          (await h.db.pipelineRun.findUniqueOrThrow({ where: { pipelineVersionId: p!.pipelineVersionId } }))
            .lastBatchAt !== null,
        90_000,
      );
      // Caught up and running: nothing fires.
      await sleep(5000);
      expect(await episodes()).toEqual([]);

      await pausePipelineRun(
        h.db,
        { pipelineVersionId: p!.pipelineVersionId, actor: "user:test@sluice.local", reason: "slow it down" },
        { scheduler: h.queue },
      );
      // The backlog grows while input is steady: 4 rising 10-second samples, then `for` 3 s.
      await waitFor("the firing notification", async () => received.length >= 1, 120_000, 200);
      const fire = received[0]!;
      expect(kinds([fire])).toEqual(["fire"]);
      expect(fire.body.text).toMatch(
        /^\[FIRING\] critical Backlog growing while input is steady on alerts-ledger v1: backlog \d+ events .* rising, input steady at [\d.]+\/s; paused by test@sluice\.local .+ ago: “slow it down” — resume it to drain — http:\/\/console\.example:3000\/pipelines\/alerts-ledger$/,
      );
      const fields = fire.body.blocks.flatMap((b) => b.fields ?? []).map((f) => f.text);
      expect(fields).toContain("*Pipeline*\nalerts-ledger v1");
      expect(fields.find((f) => f.startsWith("*Value vs threshold*"))).toMatch(
        /^\*Value vs threshold\*\n[\d.,]+ (s|min) \(threshold 2 s\)$/,
      );
      expect(fire.body.blocks.some((b) => b.text?.text.startsWith("*Runbook:*"))).toBe(true);
      expect(fire.body.blocks.at(-1)!.elements![0]!.text).toContain(
        "<http://console.example:3000/pipelines/alerts-ledger|Open alerts-ledger in Sluice>",
      );
      const [episode] = await episodes();
      expect(episode).toMatchObject({ state: "firing", pipelineVersion: 1 });
      expect(fire.key).toBe(`${episode!.id}:${contactPoint.id}:fire`);

      // Unacknowledged: a reminder after the repeat interval.
      await waitFor("a reminder", async () => kinds(received).includes("reminder"), 60_000, 200);

      // Kill the evaluating worker and flush Redis while the episode is open.
      const lease = await h.db.alertEvaluator.findUniqueOrThrow({ where: { id: "workers" } });
      const evaluating = workers.find((w) => lease.owner?.split(":")[1] === String(w.child.pid))!;
      const survivor = workers.find((w) => w !== evaluating)!;
      expect(evaluating).toBeDefined();
      evaluating.child.kill("SIGKILL");
      await evaluating.exited;
      // Delivery is at-least-once (docs/alerting): a notification the killed worker sent but had not
      // yet recorded as delivered is sent once more, with the same key, when its claim expires.
      const unrecordedAtKill = new Set(
        (
          await h.db.alertNotification.findMany({
            where: { episodeId: episode!.id, status: { not: "delivered" } },
          })
        ).map((n) => n.dedupKey),
      );
      const client = new Redis(redis.url);
      await client.flushall();
      client.disconnect();
      const beforeTakeover = received.length;
      await waitFor(
        "the other worker to take the alert lease",
        async () => {
          const l = await h.db.alertEvaluator.findUniqueOrThrow({ where: { id: "workers" } });
          return l.epoch > lease.epoch && l.owner?.split(":")[1] === String(survivor.child.pid);
        },
        60_000,
        200,
      );
      // Evaluation resumed elsewhere: the next reminder comes from the survivor, for the same episode.
      await waitFor(
        "a reminder after the takeover",
        async () => received.length > beforeTakeover,
        60_000,
        200,
      );
      expect(await episodes()).toHaveLength(1);

      // Acknowledge: no reminders after it (watch for three repeat intervals).
      await acknowledgeAlert(
        h.db,
        { userId: null, label: "oncall@sluice.local", from: { origin: "cli" } },
        { episodeId: episode!.id, pipeline: p!.name, note: "looking" },
      );
      await waitFor(
        "the acknowledgement to reach Slack",
        async () => kinds(received).includes("acknowledge"),
        30_000,
        200,
      );
      expect(received.find((r) => kinds([r])[0] === "acknowledge")!.body.text).toContain(
        "[ACKNOWLEDGED] critical Backlog growing while input is steady on alerts-ledger v1 by oncall@sluice.local: “looking”",
      );
      await sleep(1500); // a tick in flight at the acknowledgement may still remind
      const atAck = received.length;
      await sleep(18_000);
      expect(received.length).toBe(atAck);

      // Let it catch up: resolved once, one resolution notification.
      await resumePipelineRun(
        h.db,
        { pipelineVersionId: p!.pipelineVersionId, actor: "user:test@sluice.local", reason: "catch up" },
        { scheduler: h.queue },
      );
      await waitFor("the resolution", async () => kinds(received).includes("resolve"), 180_000, 200);
      await sleep(4000);
      const all = await episodes();
      expect(all.map((e) => [e.id, e.state, e.resolvedBy])).toEqual([[episode!.id, "resolved", "auto"]]);
      expect(kinds(received).filter((k) => k === "fire")).toHaveLength(1);
      expect(kinds(received).filter((k) => k === "resolve")).toHaveLength(1);
      expect(kinds(received).filter((k) => k === "acknowledge")).toHaveLength(1);
      expect(received.every((r) => r.key.startsWith(`${episode!.id}:`))).toBe(true);
      // The receiver has each request before its sender records the 2xx: wait for the last record.
      const outbox = await waitFor(
        "every notification recorded as delivered",
        async () => {
          const rows = await h.db.alertNotification.findMany({ where: { episodeId: episode!.id } });
          return rows.every((n) => n.status === "delivered") && rows;
        },
        30_000,
        200,
      );
      // Every notification received (a dedup key per fire, reminder and resolution), and none twice
      // but one the kill caught between the receiver's answer and its record — then exactly twice.
      const keys = received.map((r) => r.key);
      expect(outbox.map((n) => n.dedupKey).sort()).toEqual([...new Set(keys)].sort());
      const twice = [...new Set(keys.filter((k, i) => keys.indexOf(k) !== i))];
      for (const k of twice) {
        expect(unrecordedAtKill, `${k} received twice`).toContain(k);
        expect(keys.filter((x) => x === k)).toHaveLength(2);
      }
      await producers.stop();
      console.log(
        `[alerts] ${received.length} notifications: ${kinds(received).join(", ")}; lease epoch ${lease.epoch} → taken over by the survivor after SIGKILL + FLUSHALL`,
      );
    },
  );
});
