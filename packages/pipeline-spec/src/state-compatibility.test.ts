import { describe, expect, it } from "vitest";
import { stateCompatibility } from "./state-compatibility";
import { cdcSpec, ledgerSpec, settlementsSpec, type TLooseSpec } from "./test-specs";
import { validateSpec } from "./validate-spec";
import type { TPipelineSpec } from "./spec-schema";

function valid(spec: TLooseSpec): TPipelineSpec {
  const result = validateSpec(spec);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.spec;
}

/** Compatibility of `base` with a copy of it changed by `change`. */
function afterChange(base: () => TLooseSpec, change: (s: TLooseSpec) => void) {
  const next = base();
  change(next);
  return stateCompatibility(valid(base()), valid(next));
}

const problemsOf = (r: ReturnType<typeof stateCompatibility>) => r.problems.map((p) => [p.state, p.path]);

describe("stateCompatibility: what a new version can continue", () => {
  it("an unchanged spec, or one whose changes only decide which rows go on, continues everything", () => {
    expect(stateCompatibility(valid(settlementsSpec()), valid(settlementsSpec()))).toEqual({
      compatible: true,
      states: [
        { state: "checkpoint", continues: true },
        { state: "sink", continues: true },
        { state: "dedup", continues: true },
        { state: "window", continues: true },
      ],
      problems: [],
      notes: [],
    });
    const r = afterChange(settlementsSpec, (s) => {
      s.expectations.push({ name: "known_currency", expr: "currency in ['USD', 'EUR']", action: "warn" });
      s.transform.filter = "type == 'settlement'";
      s.contract.fields.campaign = "string?";
      s.source.kafka.maxOffsetsPerTrigger = 50_000;
      s.eventTime.watermarkDelay = "20m";
      s.lateData = "drop";
      s.trigger = { every: "10s" };
    });
    expect(r).toMatchObject({ compatible: true, problems: [], notes: [] });
  });

  it("a changed window size names the field, both sizes and the window state", () => {
    const r = afterChange(settlementsSpec, (s) => (s.aggregate.window = { tumbling: "10m" }));
    expect(r.compatible).toBe(false);
    expect(r.states).toContainEqual({ state: "window", continues: false });
    expect(r.states).toContainEqual({ state: "dedup", continues: true });
    expect(r.problems).toEqual([
      {
        state: "window",
        path: "aggregate.window.tumbling",
        reason:
          "aggregate.window.tumbling changed from 5m to 10m: the stored state holds tumbling 5m windows, the next version would use tumbling 10m",
      },
    ]);
    expect(
      problemsOf(
        afterChange(settlementsSpec, (s) => (s.aggregate.window = { sliding: { size: "10m", slide: "5m" } })),
      ),
    ).toEqual([
      ["window", "aggregate.window.sliding"],
      ["window", "aggregate.window.tumbling"],
    ]);
  });

  it("group keys, an added or redefined measure, a measured field's type and the output mode are window state", () => {
    expect(
      problemsOf(afterChange(settlementsSpec, (s) => (s.aggregate.groupBy = ["merchant_id", "currency"]))),
    ).toEqual([
      ["sink", "sink.postgres.key"],
      ["window", "aggregate.groupBy"],
    ]);
    expect(
      problemsOf(afterChange(settlementsSpec, (s) => (s.aggregate.measures.largest = "max(amount)"))),
    ).toEqual([["window", "aggregate.measures.largest"]]);
    const redefined = afterChange(
      settlementsSpec,
      (s) => (s.aggregate.measures.settled = "sum(amount) if type == 'settlement'"),
    );
    expect(redefined.problems[0]!.reason).toBe(
      "aggregate.measures.settled changed from sum(amount) to sum(amount) if type == 'settlement': the open windows' settled was folded by the old definition",
    );
    expect(problemsOf(afterChange(settlementsSpec, (s) => (s.contract.fields.amount = "double")))).toEqual([
      ["window", "contract.fields.amount.type"],
    ]);
    expect(problemsOf(afterChange(settlementsSpec, (s) => (s.aggregate.outputMode = "append")))).toEqual([
      ["sink", "sink.postgres.mode"],
      ["window", "aggregate.outputMode"],
    ]);
  });

  it("a removed measure continues: the other accumulators are unchanged", () => {
    expect(afterChange(settlementsSpec, (s) => delete s.aggregate.measures.events).compatible).toBe(true);
  });

  it("more allowedLateness would reopen finalized windows; less is fine", () => {
    const grown = afterChange(settlementsSpec, (s) => (s.aggregate.allowedLateness = "10m"));
    expect(problemsOf(grown)).toEqual([["window", "aggregate.allowedLateness"]]);
    expect(grown.notes.map((n) => [n.state, n.path])).toEqual([["dedup", "aggregate.allowedLateness"]]);
    const withLateness = () => ({
      ...settlementsSpec(),
      aggregate: { ...settlementsSpec().aggregate, allowedLateness: "10m" },
    });
    expect(afterChange(withLateness, (s) => (s.aggregate.allowedLateness = "2m")).compatible).toBe(true);
  });

  it("update and complete without a window keep the same state", () => {
    const running = () => {
      const s = settlementsSpec();
      delete s.aggregate.window;
      return s;
    };
    expect(afterChange(running, (s) => (s.aggregate.outputMode = "complete")).compatible).toBe(true);
  });

  it("dedup: a changed key or key type cannot continue; a longer retention or an added dedupe continues with a note", () => {
    expect(afterChange(ledgerSpec, (s) => (s.dedupe.key = ["event_id", "seq"])).problems).toEqual([
      {
        state: "sink",
        path: "sink.postgres.key",
        reason:
          "sink.postgres.key changed from [event_id] to [event_id, seq]: payments_ledger identifies its rows by [event_id]",
      },
      {
        state: "dedup",
        path: "dedupe.key",
        reason:
          "dedupe.key changed from [event_id] to [event_id, seq]: the stored keys are values of the old columns, so a duplicate of an event already seen would not be found",
      },
    ]);
    expect(problemsOf(afterChange(ledgerSpec, (s) => (s.contract.fields.event_id = "int")))).toEqual([
      ["dedup", "contract.fields.event_id.type"],
    ]);
    const longer = afterChange(ledgerSpec, (s) => (s.dedupe.within = "48h"));
    expect(longer.compatible).toBe(true);
    expect(longer.notes[0]!.reason).toMatch(
      /^dedupe\.within changed from watermark to 2d: keys the previous version already evicted stay evicted/,
    );
    const shorter = () => ({ ...ledgerSpec(), dedupe: { key: ["event_id"], within: "48h" } });
    expect(afterChange(shorter, (s) => (s.dedupe.within = "1d"))).toMatchObject({
      compatible: true,
      notes: [],
    });
    const undeduped = () => {
      const s = ledgerSpec();
      delete s.dedupe;
      s.sink.postgres.key = ["event_id"];
      return s;
    };
    expect(
      afterChange(undeduped, (s) => (s.dedupe = { key: ["event_id"], within: "watermark" })),
    ).toMatchObject({
      compatible: true,
      notes: [{ state: "dedup", path: "dedupe" }],
    });
  });

  it("CDC: key, sequence, SCD type and their field types; a changed delete condition continues", () => {
    expect(problemsOf(afterChange(cdcSpec, (s) => (s.cdc.key = ["customer_id", "status"])))).toEqual([
      ["sink", "sink.postgres.key"],
      ["cdc", "cdc.key"],
    ]);
    expect(
      problemsOf(
        afterChange(cdcSpec, (s) => {
          s.contract.fields.lsn = "int";
          s.cdc.sequenceBy = "lsn";
        }),
      ),
    ).toEqual([["cdc", "cdc.sequenceBy"]]);
    expect(problemsOf(afterChange(cdcSpec, (s) => (s.cdc.scdType = 1)))).toEqual([
      ["sink", "sink.postgres.key"],
      ["cdc", "cdc.scdType"],
    ]);
    expect(problemsOf(afterChange(cdcSpec, (s) => (s.contract.fields.version = "decimal")))).toEqual([
      ["cdc", "contract.fields.version.type"],
    ]);
    expect(afterChange(cdcSpec, (s) => (s.cdc.deleteWhen = "op in ['D', 'X']")).compatible).toBe(true);
    const timed = () => ({
      ...cdcSpec(),
      contract: { fields: { ...cdcSpec().contract.fields, changed_at: "timestamp" } },
      eventTime: { column: "changed_at", watermarkDelay: "5m" },
    });
    expect(afterChange(timed, (s) => (s.cdc.stateEviction = "watermark"))).toMatchObject({
      compatible: true,
      notes: [],
    });
  });

  it("the checkpoint: a changed topic or event-time column; the sink: another table, key or mode", () => {
    expect(afterChange(ledgerSpec, (s) => (s.source.kafka.topic = "payments-v2")).problems).toEqual([
      {
        state: "checkpoint",
        path: "source.kafka.topic",
        reason:
          "source.kafka.topic changed from payments to payments-v2: the checkpoint's offsets are positions in payments",
      },
    ]);
    expect(
      problemsOf(
        afterChange(ledgerSpec, (s) => {
          s.contract.fields.settled_at = "timestamp";
          s.eventTime.column = "settled_at";
        }),
      ),
    ).toEqual([["checkpoint", "eventTime.column"]]);
    // Another table is one reason: nothing else is compared with a result that is not there.
    expect(
      problemsOf(
        afterChange(settlementsSpec, (s) => {
          s.sink.postgres.table = "merchant_settlement_10m";
          s.aggregate.window = { tumbling: "10m" };
        }),
      ),
    ).toEqual([["sink", "sink.postgres.table"]]);
    expect(problemsOf(afterChange(ledgerSpec, (s) => (s.sink.postgres.mode = "upsert")))).toEqual([
      ["sink", "sink.postgres.mode"],
    ]);
  });

  it("another kind of result or sink is one sink problem", () => {
    const r = afterChange(ledgerSpec, (s) => {
      s.aggregate = { window: { tumbling: "5m" }, groupBy: ["merchant_id"], measures: { events: "count()" } };
    });
    expect(r.problems).toEqual([
      {
        state: "sink",
        path: "aggregate",
        reason: "aggregate added: the sink holds rows, the next version would write aggregate results",
      },
    ]);
    expect(r.states).toContainEqual({ state: "window", continues: true });
    const hook = afterChange(
      ledgerSpec,
      (s) => (s.sink = { webhook: { url: "https://hooks.example.com/p" } }),
    );
    expect(hook.problems).toEqual([
      {
        state: "sink",
        path: "sink.postgres",
        reason:
          "sink.postgres removed: the checkpoint vouches for what table payments_ledger received, and the next version would write elsewhere",
      },
    ]);
  });

  it("webhook: another idempotency key would re-send delivered rows under new keys; another URL continues", () => {
    const hook = () => ({ ...ledgerSpec(), sink: { webhook: { url: "https://hooks.example.com/p" } } });
    expect(problemsOf(afterChange(hook, (s) => (s.sink.webhook.idempotencyKey = ["customer_id"])))).toEqual([
      ["webhookLedger", "sink.webhook.idempotencyKey"],
    ]);
    expect(afterChange(hook, (s) => (s.sink.webhook.url = "https://hooks.example.com/v2")).compatible).toBe(
      true,
    );
  });
});
