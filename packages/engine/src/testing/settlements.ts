// The windowed settlements workload of the engine's window tests, shared with the tests that run it
// through outages: the spec (a ledger topic folded into per-merchant windows with every kind of
// measure) and the SQL that recomputes its expected result from the raw events (reference-events.ts).
import { simulatedClock } from "@sluice/producer";
import { validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { ledgerSpec } from "./engine-fixture";
import { judgedEventsSql } from "./reference-events";

const MIN = 60_000;

export function settlementsSpec(
  topic: string,
  name: string,
  table: string,
  aggregate: Record<string, unknown>,
  overrides: Record<string, unknown> = {},
): TPipelineSpec {
  return ledgerSpec(topic, {
    name,
    source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 600 } },
    eventTime: { column: "event_time", watermarkDelay: "2m", idleTimeout: "1h" },
    expectations: [],
    transform: { filter: "type in ['settlement', 'refund']" },
    aggregate: {
      groupBy: ["merchant_id"],
      measures: {
        settled: "sum(amount)",
        refunded: "sum(amount) if type == 'refund'",
        events: "count()",
        customers: "count_distinct(customer_id)",
        largest: "max(amount)",
        mean: "avg(amount)",
      },
      ...aggregate,
    },
    sink: { postgres: { table } },
    ...overrides,
  });
}

export const EXPECTED_MEASURES = `sum(amount)::text AS settled, coalesce(sum(amount) FILTER (WHERE type = 'refund'), 0)::text AS refunded, count(*)::int AS events,
  count(DISTINCT customer_id)::int AS customers, max(amount)::text AS largest, round(avg(amount), 6)::text AS mean`;
/** The sink's columns, cast like EXPECTED_MEASURES, for comparing rows. */
export const SINK_COLUMNS = `merchant_id, window_start, window_end, settled::text, refunded::text, events::int, customers::int, largest::text, mean::text`;

/** The update-mode settlements over the raw events: 5-minute windows, rows up to 3 minutes late accepted (watermarkDelay 2m). */
export function tumbling5mLateness3mSql(): string {
  return `WITH ${judgedEventsSql(2 * MIN)},
       accepted AS (SELECT DISTINCT ON (event_id) * FROM ref_judged
                     WHERE type IN ('settlement', 'refund') AND (prev_watermark IS NULL OR event_time >= prev_watermark - interval '3 minutes')
                     ORDER BY event_id, batch_id)
       SELECT merchant_id, to_timestamp(floor(extract(epoch FROM event_time) / 300) * 300) AS window_start,
              to_timestamp(floor(extract(epoch FROM event_time) / 300) * 300 + 300) AS window_end, ${EXPECTED_MEASURES}
         FROM accepted GROUP BY 1, 2, 3 ORDER BY 2, 1`;
}

/**
 * The adversarial payments the settlement windows are judged on: 6,000 events on 3 partitions, 12
 * merchants, a simulated 30 minutes, with duplicates, out-of-order events and events up to 8 minutes
 * late. A function: the simulated clock is consumed by each run.
 */
export function settlementsWorkload(seed = 4242) {
  return {
    count: 6000,
    partitions: 3,
    seed,
    merchants: 12,
    clock: simulatedClock({ start: "2025-03-01T10:00:00Z", stepMs: 300 }),
    duplicateShare: 0.05,
    outOfOrderShare: 0.1,
    lateShare: 0.06,
    lateMinMs: 30_000,
    lateMaxMs: 8 * 60_000,
  };
}

/**
 * The settlements split into two outputs from one read: a fraud view (5-minute windows upserted as
 * they change, the pipeline's watermark delay) and a finance output (its own delay, each window
 * written once when final), each with its own lateness (minutes).
 */
export function settlementViewsSpec(
  topic: string,
  name: string,
  o: {
    fraudTable: string;
    financeTable: string;
    fraud: { delay: number; lateness: number };
    finance: { delay: number; lateness: number };
  },
): TPipelineSpec {
  const window = { tumbling: "5m" };
  const {
    sink: _sink,
    aggregate: _aggregate,
    ...shared
  } = settlementsSpec(
    topic,
    name,
    o.fraudTable,
    { window },
    {
      source: { kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 500 } },
      eventTime: { column: "event_time", watermarkDelay: `${o.fraud.delay}m`, idleTimeout: "1h" },
    },
  );
  const measures = settlementsSpec(topic, name, o.fraudTable, { window }).aggregate!.measures;
  const result = validateSpec({
    ...shared,
    outputs: {
      fraud: {
        aggregate: { window, groupBy: ["merchant_id"], measures, allowedLateness: `${o.fraud.lateness}m` },
        sink: { postgres: { table: o.fraudTable } },
      },
      finance: {
        watermarkDelay: `${o.finance.delay}m`,
        aggregate: {
          window,
          groupBy: ["merchant_id"],
          measures,
          outputMode: "append",
          allowedLateness: `${o.finance.lateness}m`,
        },
        sink: { postgres: { table: o.financeTable } },
      },
    },
  });
  if (!result.ok) throw new Error(`bad test spec: ${JSON.stringify(result.errors)}`);
  return result.spec;
}
