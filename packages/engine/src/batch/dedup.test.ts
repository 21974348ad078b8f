import { describe, expect, it } from "vitest";
import { ledgerSpec } from "../testing/engine-fixture";
import { dedupKeptBySink } from "./dedup";

const spec = (overrides: Record<string, unknown>) => ledgerSpec("payments", overrides);

describe("dedupKeptBySink: which ledgers leave their dedup keys to the table", () => {
  it("an append ledger keyed by its one text dedupe key, event time in the table: the table keeps them", () => {
    expect(dedupKeptBySink(spec({}))).toEqual({ key: "event_id", time: "event_time" });
    // Without eventTime a key's dedup time is the ingest time, which every ledger row keeps.
    expect(
      dedupKeptBySink(spec({ eventTime: undefined, dedupe: { key: ["event_id"], within: "1h" } })),
    ).toEqual({
      key: "event_id",
      time: "_ingest_time",
    });
  });

  it("keeps dedup state when the table could not refuse a repeat of the key, or could not hand the keys on", () => {
    const cases: [string, Record<string, unknown>][] = [
      ["upsert: a repeat replaces the row", { sink: { postgres: { table: "ledger", mode: "upsert" } } }],
      [
        "the table's key has more columns",
        { sink: { postgres: { table: "ledger", key: ["event_id", "seq"] } } },
      ],
      ["two dedupe columns", { dedupe: { key: ["event_id", "seq"], within: "watermark" } }],
      ["an int key", { dedupe: { key: ["seq"], within: "watermark" } }],
      [
        "the event-time column is not written",
        { transform: { select: ["event_id", "type", "merchant_id", "amount", "currency"] } },
      ],
      ["no dedupe", { dedupe: undefined }],
      [
        "an aggregate",
        {
          aggregate: { window: { tumbling: "5m" }, groupBy: ["merchant_id"], measures: { n: "count()" } },
          sink: { postgres: { table: "windows" } },
        },
      ],
      [
        "several outputs",
        { sink: undefined, outputs: { main: { sink: { postgres: { table: "ledger" } } } } },
      ],
    ];
    for (const [why, overrides] of cases)
      expect({ why, kept: dedupKeptBySink(spec(overrides)) }).toEqual({ why, kept: undefined });
  });
});
