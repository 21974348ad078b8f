import { describe, expect, it } from "vitest";
import type { TPipelineAlertSignals } from "./alert-signals";
import {
  evaluateFleetCondition,
  evaluatePipelineCondition,
  evaluateRuleCondition,
} from "./evaluate-condition";
import { at, backlogSeries, baseSignals, replay, type TReplayTick } from "./replay.test-helpers";
import { isSilenced, stepRule } from "./step-rule";
import { stateHorizonOf } from "./state-horizon";
import { formatRuleValue } from "./rule-kinds";

/** Ticks every 5 s over [from, to], each with the signals `f(t)` returns. */
function ticks(
  from: number,
  to: number,
  f: (t: number) => Partial<TPipelineAlertSignals>,
  extra: (t: number) => Partial<TReplayTick> = () => ({}),
): TReplayTick[] {
  const out: TReplayTick[] = [];
  for (let t = from; t <= to; t += 5) out.push({ t, signals: baseSignals(f(t)), ...extra(t) });
  return out;
}

/** A paused pipeline: input steady at 100/s, backlog grows 1000 per 10 s. */
const falling = (t: number) => ({
  recent: backlogSeries(
    at(t),
    [0, 1, 2, 3, 4, 5].map((i) => 1000 * (t / 10 + i)),
    100,
  ),
  processingRate: 0,
});
/** Caught up: backlog small and flat. */
const caughtUp = (t: number) => ({
  recent: backlogSeries(at(t), [50, 40, 60, 50, 40, 50], 100),
  processingRate: 100,
});

describe("default rules over recorded series", () => {
  it("backlog growing while input is steady fires once after `for`, and resolves once after clear-for", () => {
    const series = [...ticks(0, 300, falling), ...ticks(305, 600, caughtUp)];
    const { notifications, episodes } = replay("backlog_growing", series);
    expect(notifications.map((n) => n.kind)).toEqual(["fire", "resolve"]);
    expect(notifications[0]!.t).toBe(60); // for: 60 s after the condition first held at t=0
    expect(notifications[1]!.t).toBe(305 + 120); // clear-for: 120 s
    expect(episodes).toHaveLength(1);
  });

  it("a backlog someone paused says who paused it, when and why", () => {
    const paused = baseSignals({
      ...falling(300),
      phase: "paused",
      heldBy: { action: "pause", actor: "operator@sluice.local", at: at(-420), reason: "upstream incident" },
    });
    const c = evaluatePipelineCondition("backlog_growing", null, paused, at(300));
    expect(c.active).toBe(true);
    expect(c.summary).toMatch(
      /; paused by operator@sluice\.local 12 min ago: “upstream incident” — resume it to drain$/,
    );
    expect(
      evaluatePipelineCondition("backlog_growing", null, baseSignals(falling(300)), at(300)).summary,
    ).not.toMatch(/paused by/);
  });

  it("a producer fault pages with the field, the types, the quarantine count and a sample while it is seen", () => {
    const fault = {
      field: "amount",
      declaredType: "decimal",
      types: { json: 20, boolean: 3 },
      rows: 23,
      lastSeen: at(-60),
      sample: { event_id: "e-1", amount: { corrupt: true } },
    };
    const c = evaluatePipelineCondition(
      "producer_fault",
      null,
      baseSignals({ producerFaults: [fault] }),
      at(0),
    );
    expect(c).toMatchObject({ active: true, value: 23 });
    expect(c.summary).toBe(
      'the producer sends values no contract type holds: amount (declared decimal) arrives as json × 20, boolean × 3 — 23 rows quarantined; sample {"event_id":"e-1","amount":{"corrupt":true}}',
    );
    const old = baseSignals({ producerFaults: [{ ...fault, lastSeen: at(-11 * 60) }] });
    expect(evaluatePipelineCondition("producer_fault", null, old, at(0)).active).toBe(false);
    expect(formatRuleValue("producer_fault", 23)).toBe("23 rows quarantined");
  });

  it("count values carry what they count", () => {
    expect(formatRuleValue("batch_failures", 3)).toBe("3 failed attempts");
    expect(formatRuleValue("webhook_failures", 1)).toBe("1 failed deliveries");
    expect(formatRuleValue("dead_letter_rate", 0.0275)).toBe("2.75%");
  });

  it("backlog growing does not fire on a burst that drains", () => {
    // Input 100/s, then 2000/s for 40 s; the pipeline processes 400/s, so the backlog climbs for 4 samples to
    // 64k and drains within ~4 minutes of the burst ending: rising, but the input was not steady.
    const rate = (t: number) => (t >= 100 && t < 140 ? 2000 : 100);
    let backlog = 0;
    const backlogAt = new Map<number, number>();
    for (let t = 0; t <= 600; t += 10) {
      backlogAt.set(t, backlog);
      backlog = Math.max(0, backlog + (rate(t) - 400) * 10);
    }
    const signalsAt = (t: number) => {
      const end = Math.floor(t / 10) * 10;
      const points = [50, 40, 30, 20, 10, 0].map((ago) => end - ago).filter((x) => x >= 0);
      return {
        recent: points.map((x) => ({ t: at(x), backlog: backlogAt.get(x)!, inputRate: rate(x - 10) })),
        processingRate: 400,
      };
    };
    expect(Math.max(...backlogAt.values())).toBeGreaterThan(60_000);
    const { notifications } = replay("backlog_growing", ticks(0, 600, signalsAt));
    expect(notifications).toEqual([]);
    // The same backlog curve with steady input (a pipeline that slowed down) does fire.
    const slowed = (t: number) => ({
      ...signalsAt(t),
      recent: signalsAt(t).recent.map((p) => ({ ...p, inputRate: 100 })),
    });
    expect(
      replay("backlog_growing", ticks(0, 600, slowed), { forSeconds: 10 }).notifications.map((n) => n.kind),
    ).toContain("fire");
  });

  it("a backlog rising with unsteady input is not 'falling behind'", () => {
    const spiky = (t: number) => ({
      recent: backlogSeries(
        at(t),
        [1000, 4000, 5000, 9000, 12_000, 20_000],
        [100, 900, 100, 1500, 300, 2000],
      ),
    });
    expect(evaluatePipelineCondition("backlog_growing", 30, baseSignals(spiky(0)), at(0)).active).toBe(false);
  });

  it("hysteresis: a signal flapping back within clear-for pages once", () => {
    // Falling behind, then flapping: 60 s clear, 30 s bad, 60 s clear, 30 s bad … clear-for is 120 s.
    const flapping = (t: number) =>
      t < 120 || Math.floor((t - 120) / 45) % 2 === 1 ? falling(t) : caughtUp(t);
    const { notifications, episodes } = replay("backlog_growing", ticks(0, 900, flapping));
    expect(notifications.map((n) => n.kind)).toEqual(["fire"]);
    expect(episodes).toHaveLength(1);
  });

  it("without hysteresis the same flapping signal would page every time (the test can fail)", () => {
    const flapping = (t: number) =>
      t < 120 || Math.floor((t - 120) / 45) % 2 === 1 ? falling(t) : caughtUp(t);
    const { notifications } = replay("backlog_growing", ticks(0, 900, flapping), {
      clearForSeconds: 0,
      forSeconds: 0,
    });
    expect(notifications.filter((n) => n.kind === "fire").length).toBeGreaterThan(3);
  });

  it("a silence suppresses notifications but not the alert's state; the fire is sent when the silence ends", () => {
    const series = ticks(0, 400, falling, (t) => ({ silenced: t < 200 }));
    const { notifications, episodes } = replay("backlog_growing", series);
    expect(episodes).toEqual([{ opened: 60, resolved: null }]);
    expect(notifications).toEqual([{ t: 200, kind: "fire" }]);
  });

  it("an episode fired and resolved entirely under a silence sends nothing", () => {
    const series = [...ticks(0, 200, falling), ...ticks(205, 500, caughtUp)].map((x) => ({
      ...x,
      silenced: true,
    }));
    const { notifications, episodes } = replay("backlog_growing", series);
    expect(episodes).toEqual([{ opened: 60, resolved: 325 }]);
    expect(notifications).toEqual([]);
  });

  it("a reminder only while firing and unacknowledged past the repeat interval", () => {
    const unacked = replay("backlog_growing", ticks(0, 700, falling), { repeatSeconds: 300 });
    expect(unacked.notifications).toEqual([
      { t: 60, kind: "fire" },
      { t: 360, kind: "reminder" },
      { t: 660, kind: "reminder" },
    ]);
    const acked = replay(
      "backlog_growing",
      ticks(0, 700, falling, (t) => ({ acknowledge: t === 100 })),
      { repeatSeconds: 300 },
    );
    expect(acked.notifications).toEqual([{ t: 60, kind: "fire" }]);
  });

  it("processing below input fires after 5 minutes and clears when it keeps up", () => {
    const slow = (t: number) => ({
      recent: backlogSeries(
        at(t),
        [1, 2, 3, 4, 5, 6].map((i) => 500 * (t / 10 + i)),
        100,
      ),
      processingRate: 50,
    });
    const { notifications } = replay("processing_below_input", [
      ...ticks(0, 400, slow),
      ...ticks(405, 600, caughtUp),
    ]);
    expect(notifications).toEqual([
      { t: 300, kind: "fire" },
      { t: 525, kind: "resolve" },
    ]);
  });

  it("freshness fires over the spec's target only while input waits", () => {
    const stale = baseSignals({ ingestAgeMs: 400_000, recent: backlogSeries(at(0), [10], 1) });
    expect(evaluatePipelineCondition("freshness", null, stale, at(0))).toMatchObject({
      active: true,
      value: 400,
      threshold: 300,
    });
    const idle = baseSignals({ ingestAgeMs: 400_000, recent: backlogSeries(at(0), [0], 0) });
    expect(evaluatePipelineCondition("freshness", null, idle, at(0)).active).toBe(false);
    expect(evaluatePipelineCondition("freshness", 500, stale, at(0)).active).toBe(false);
  });

  it("violation and dead-letter rates fire over their thresholds", () => {
    const s = baseSignals({ window: { inputRows: 1000, violations: 150, quarantinedOrDead: 5, late: 0 } });
    expect(evaluatePipelineCondition("violation_rate", null, s, at(0))).toMatchObject({
      active: true,
      value: 0.15,
      threshold: 0.01,
    });
    expect(evaluatePipelineCondition("dead_letter_rate", null, s, at(0))).toMatchObject({
      active: false,
      value: 0.005,
    });
    expect(evaluatePipelineCondition("dead_letter_rate", 0.001, s, at(0)).active).toBe(true);
  });

  it("late_rate: the pipeline's late rows over its input, or one output's over the rows that reached it", () => {
    const s = baseSignals({
      window: { inputRows: 1000, violations: 0, quarantinedOrDead: 0, late: 10 },
      outputs: [
        {
          name: "fraud",
          window: { inputRows: 800, violations: 40, quarantinedOrDead: 0, late: 200 },
          stateRows: [],
        },
        {
          name: "finance",
          window: { inputRows: 800, violations: 0, quarantinedOrDead: 0, late: 0 },
          stateRows: [],
        },
      ],
    });
    expect(evaluateRuleCondition("late_rate", null, null, s, at(0))).toMatchObject({
      active: false,
      value: 0.01,
    });
    expect(evaluateRuleCondition("late_rate", null, "fraud", s, at(0))).toMatchObject({
      active: true,
      value: 0.25,
      threshold: 0.05,
      summary: "25% of 800 rows too late to count (last 5 min)",
    });
    expect(evaluateRuleCondition("late_rate", null, "finance", s, at(0)).active).toBe(false);
    expect(evaluateRuleCondition("violation_rate", 0.01, "fraud", s, at(0)).value).toBe(0.05);
    // An output the serving version no longer declares is never judged.
    expect(evaluateRuleCondition("late_rate", null, "audit", s, at(0))).toMatchObject({
      active: false,
      summary: "output audit: not declared by the serving version (v3), nothing to judge",
    });
  });

  it("batch failures: a failed pipeline fires at once; consecutive failures at the threshold", () => {
    const { notifications } = replay("batch_failures", [
      { t: 0, signals: baseSignals({ consecutiveFailures: 2 }) },
      { t: 5, signals: baseSignals({ consecutiveFailures: 3, lastError: "connection refused\nstack" }) },
      { t: 10, signals: baseSignals({ phase: "failed", consecutiveFailures: 5 }) },
      { t: 15, signals: baseSignals({ phase: "running", consecutiveFailures: 0 }) },
      { t: 80, signals: baseSignals({ phase: "running", consecutiveFailures: 0 }) },
    ]);
    expect(notifications).toEqual([
      { t: 5, kind: "fire" },
      { t: 80, kind: "resolve" },
    ]);
    expect(
      evaluatePipelineCondition(
        "batch_failures",
        3,
        baseSignals({ phase: "failed", lastError: "boom\nat x" }),
        at(0),
      ).summary,
    ).toBe("pipeline failed: boom");
  });

  it("state growth fires when state rises over the window while input is steady, not when it is evicted", () => {
    const minutes = (rows: (i: number) => number) =>
      Array.from({ length: 30 }, (_, i) => ({ t: at(-(30 - i) * 60), rows: rows(i) }));
    // State that began two hours ago with a one-minute horizon: filled long before the window.
    const old = { stateSince: at(-7200), stateHorizon: { ms: 60_000, why: "dedup keys kept within 1m" } };
    const growing = baseSignals({
      ...old,
      stateRows: minutes((i) => 1000 + i * 100),
      stateWindowInputRates: Array(30).fill(50),
    });
    expect(evaluatePipelineCondition("state_growth", null, growing, at(0))).toMatchObject({
      active: true,
      value: 2.9,
    });
    const bounded = baseSignals({
      ...old,
      stateRows: minutes((i) => 1000 + (i % 5) * 100),
      stateWindowInputRates: Array(30).fill(50),
    });
    expect(evaluatePipelineCondition("state_growth", null, bounded, at(0)).active).toBe(false);
    const rampingInput = baseSignals({
      ...growing,
      stateWindowInputRates: Array.from({ length: 30 }, (_, i) => 10 + i * 20),
    });
    expect(evaluatePipelineCondition("state_growth", null, rampingInput, at(0)).active).toBe(false);
  });

  it("state growth stays quiet while the spec's horizon fills, and judges only what grew after it", () => {
    const ledger = stateHorizonOf({
      eventTime: { column: "event_time", watermarkDelay: "6h" },
      dedupe: { key: ["event_id"], within: "watermark" },
    })!;
    expect(ledger.ms).toBe(6 * 3600_000 + 60_000);
    expect(ledger.why).toMatch(/dedup keys until the watermark passes them/);
    // The payments ledger's first hour: 141k → 189k rows, never shrinking, input steady.
    const firstHour = baseSignals({
      stateSince: at(-3600),
      stateHorizon: ledger,
      stateRows: Array.from({ length: 30 }, (_, i) => ({ t: at(-(30 - i) * 60), rows: 141_177 + i * 1650 })),
      stateWindowInputRates: Array(30).fill(50),
    });
    const quiet = evaluatePipelineCondition("state_growth", null, firstHour, at(0));
    expect(quiet.active).toBe(false);
    expect(quiet.summary).toMatch(/state still filling its horizon \(dedup keys until the watermark/);
    // Filled 15 minutes ago: 15 points after it, all growing → fires on them alone.
    const filled = baseSignals({
      ...firstHour,
      stateSince: at(-(21_660 + 2_166 + 900)), // horizon 6h1m, margin a tenth of it
      stateRows: Array.from({ length: 30 }, (_, i) => ({
        t: at(-(30 - i) * 60),
        rows: i < 15 ? 100 : 100 * i,
      })),
    });
    expect(evaluatePipelineCondition("state_growth", null, filled, at(0))).toMatchObject({ active: true });
    // Nothing committed yet: nothing to judge.
    expect(
      evaluatePipelineCondition("state_growth", null, baseSignals({ stateHorizon: ledger }), at(0)).active,
    ).toBe(false);
  });

  it("a spec's state horizon: windows, lateness, outputs and a duration `within`", () => {
    const settlements = stateHorizonOf({
      eventTime: { column: "event_time", watermarkDelay: "10m", idleTimeout: "1m" },
      dedupe: { key: ["event_id"], within: "watermark" },
      aggregate: { window: { tumbling: "5m" }, allowedLateness: "20m" },
    })!;
    expect(settlements.ms).toBe(36 * 60_000);
    expect(settlements.why).toMatch(/windows of 5m kept for watermarkDelay 10m \+ allowedLateness 20m/);
    expect(stateHorizonOf({ dedupe: { key: ["id"], within: "24h" } })).toEqual({
      ms: 24 * 3600_000,
      why: "dedup keys kept within 1d",
    });
    const outputs = stateHorizonOf({
      eventTime: { column: "t", watermarkDelay: "1m" },
      outputs: { slow: { watermarkDelay: "2h", aggregate: { window: { tumbling: "1h" } } } },
    })!;
    expect(outputs.ms).toBe(3 * 3600_000 + 60_000);
    expect(outputs.why).toMatch(/^output slow: windows of 1h/);
    expect(stateHorizonOf({ name: "stateless" })).toBeNull();
    expect(stateHorizonOf("not a spec")).toBeNull();
  });

  it("webhook failures fire on the first delivery that failed for good", () => {
    expect(
      evaluatePipelineCondition("webhook_failures", null, baseSignals({ webhookFailures: 1 }), at(0)).active,
    ).toBe(true);
    expect(
      evaluatePipelineCondition("webhook_failures", null, baseSignals({ webhookFailures: 0 }), at(0)).active,
    ).toBe(false);
  });

  it("a running pipeline with no batch for N trigger intervals fires; a paused one does not", () => {
    const stuck = baseSignals({ waitingSince: at(-40), triggerMs: 2000 });
    expect(evaluatePipelineCondition("batch_stalled", 10, stuck, at(0))).toMatchObject({
      active: true,
      value: 20,
    });
    expect(evaluatePipelineCondition("batch_stalled", 10, { ...stuck, phase: "paused" }, at(0)).active).toBe(
      false,
    );
    expect(
      evaluatePipelineCondition("batch_stalled", 10, { ...stuck, waitingSince: at(-10) }, at(0)).active,
    ).toBe(false);
  });

  it("fleet: a missing heartbeat and no worker alive", () => {
    const workers = [
      { id: "w1", host: "h", lastHeartbeatAt: at(-5), stoppedAt: null },
      { id: "w2", host: "h", lastHeartbeatAt: at(-60), stoppedAt: null },
      { id: "w3", host: "h", lastHeartbeatAt: at(-60), stoppedAt: at(-59) },
    ];
    expect(
      evaluateFleetCondition("worker_heartbeat_missing", 30, { workers, runningPipelines: 1 }, at(0)),
    ).toMatchObject({ active: true, value: 60, summary: "no heartbeat from w2" });
    expect(
      evaluateFleetCondition("no_worker_alive", 30, { workers, runningPipelines: 1 }, at(0)).active,
    ).toBe(false);
    expect(
      evaluateFleetCondition(
        "no_worker_alive",
        30,
        { workers: workers.slice(1), runningPipelines: 1 },
        at(0),
      ),
    ).toMatchObject({ active: true, value: 60 });
    expect(
      evaluateFleetCondition("no_worker_alive", 30, { workers: [], runningPipelines: 0 }, at(0)).active,
    ).toBe(false);
  });

  it("unknown conditions hold the state: a gap in samples neither fires nor resolves", () => {
    const rule = { forSeconds: 60, clearForSeconds: 60, repeatSeconds: 0, pendingSince: at(0) };
    expect(stepRule(rule, null, { active: null }, false, at(100))).toEqual({
      action: "idle",
      pendingSince: at(0),
    });
    const ep = { state: "firing" as const, clearSince: at(0), notifiedAt: at(0), lastNotifiedAt: at(0) };
    expect(stepRule(rule, ep, { active: null }, false, at(100))).toMatchObject({
      action: "update",
      clearSince: at(0),
    });
  });

  it("silences match by rule or pipeline, until they expire or end", () => {
    const rule = { id: "r1", pipelineId: "p1" };
    expect(
      isSilenced([{ pipelineId: "p1", ruleId: null, expiresAt: at(10), endedAt: null }], rule, at(0)),
    ).toBe(true);
    expect(
      isSilenced([{ pipelineId: null, ruleId: "r1", expiresAt: at(10), endedAt: null }], rule, at(0)),
    ).toBe(true);
    expect(
      isSilenced([{ pipelineId: "p1", ruleId: null, expiresAt: at(-1), endedAt: null }], rule, at(0)),
    ).toBe(false);
    expect(
      isSilenced([{ pipelineId: "p1", ruleId: null, expiresAt: at(10), endedAt: at(-1) }], rule, at(0)),
    ).toBe(false);
    expect(
      isSilenced([{ pipelineId: "p2", ruleId: "r2", expiresAt: at(10), endedAt: null }], rule, at(0)),
    ).toBe(false);
  });
});
