// Shared by the temporal join's integration tests: a fixture with the payments topic and a dimension
// changelog topic (partitions of each chosen by the test), a producer and a spec directory for the
// kill loop; payments as the ledger contract's messages; and what a joining pipeline stored.
import type { Admin, Producer } from "kafkajs";
import type { Prng } from "@sluice/producer";
import { createEngineFixture, type EngineFixture } from "./engine-fixture";
import { specDir } from "./sluice-process";

/** The workloads' shape: payments on three partitions, the changelog on two, rows wait 30 minutes. */
export const FACT_PARTITIONS = 3;
export const DIM_PARTITIONS = 2;
export const WAIT_FOR_MINUTES = 30;
const T0 = Date.parse("2026-01-01T00:00:00Z");
/** An instant `minutes` after the workloads' origin. */
export const at = (minutes: number) => new Date(T0 + minutes * 60_000);

export interface JoinWorkload {
  fx: EngineFixture;
  dimTopic: string;
  producer: Producer;
  specs: Awaited<ReturnType<typeof specDir>>;
  close(): Promise<void>;
}

export async function openJoinWorkload(label: string): Promise<JoinWorkload> {
  const fx = await createEngineFixture(label);
  const dimTopic = `${fx.topic}-customers`;
  const admin: Admin = fx.kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic: fx.topic, numPartitions: FACT_PARTITIONS },
      { topic: dimTopic, numPartitions: DIM_PARTITIONS },
    ],
    waitForLeaders: true,
  });
  const producer = fx.kafka.producer();
  await producer.connect();
  const specs = await specDir();
  return {
    fx,
    dimTopic,
    producer,
    specs,
    async close() {
      await producer.disconnect();
      await admin.deleteTopics({ topics: [dimTopic] }).catch(() => undefined);
      await admin.disconnect();
      await specs.cleanup();
      await fx.close();
    },
  };
}

export interface Payment {
  event_id: string;
  customer_id: string;
  event_time: Date;
  partition: number;
}

/** A payment as the ledger contract's Kafka message, on its partition, keyed by its customer. */
function paymentMessage(f: Payment) {
  return {
    partition: f.partition,
    key: f.customer_id,
    value: JSON.stringify({
      event_id: f.event_id,
      type: "payment",
      merchant_id: "m1",
      customer_id: f.customer_id,
      payment_id: `p-${f.event_id}`,
      seq: 1,
      amount: "10.00",
      currency: "USD",
      card_country: "US",
      event_time: f.event_time.toISOString(),
    }),
  };
}

/** Sends the payments shuffled, about one in ten twice (a duplicate the pipeline's dedupe drops). */
export async function sendPayments(w: JoinWorkload, payments: Payment[], rng: Prng): Promise<void> {
  const withDuplicates = [...payments, ...payments.filter(() => rng.next() < 0.1)].sort(
    () => rng.next() - 0.5,
  );
  if (withDuplicates.length > 0)
    await w.producer.send({ topic: w.fx.topic, messages: withDuplicates.map(paymentMessage) });
}

/**
 * What a joining pipeline stored: its rows (`select`: the columns compared, from the sink table),
 * the payments dead-lettered `dimension_missing` (with their reasons) and the payments still waiting.
 */
export async function storedJoin<R extends Record<string, unknown>>(
  w: JoinWorkload,
  select: string,
  pipelineVersionId: string,
) {
  const rows = await w.fx.pool.query<R>(`${select} ORDER BY event_id`);
  const missing = await w.fx.pool.query<{ event_id: string; reason: string }>(
    `SELECT payload->>'event_id' AS event_id, reason FROM dead_letters
      WHERE pipeline_version_id = $1 AND topic = $2 AND reason LIKE 'dimension_missing%' ORDER BY 1`,
    [pipelineVersionId, w.fx.topic],
  );
  const waiting = await w.fx.pool.query<{ event_id: string }>(
    `SELECT row->'values'->>'event_id' AS event_id FROM join_held WHERE pipeline_version_id = $1 ORDER BY 1`,
    [pipelineVersionId],
  );
  return {
    joined: rows.rows,
    missing: missing.rows.map((r) => r.event_id),
    reasons: missing.rows.map((r) => r.reason),
    waiting: waiting.rows.map((r) => r.event_id).sort(),
  };
}

/**
 * The recomputation's common part, as SQL CTEs ending in `decided` (event_id, customer_id, event_time,
 * phase, decided_in): per phase the dimension's watermark (its slowest partition's newest change −
 * 1 minute, from ref_changes(changed_at, partition, phase)) and the payments' event time (the
 * slowest payment partition's newest, from ref_facts(event_id, customer_id, event_time, partition,
 * phase)); each payment is decided in the first phase from its own where the dimension passed it or it
 * waited WAIT_FOR_MINUTES — null: still waiting. `phaseOf`: `phase`, or a constant phase when
 * everything was produced before the run.
 */
export function decidedSql(phaseOf: string, phases: number): string {
  return `phases AS (SELECT generate_series(1, ${phases}) AS p),
     dim_time AS (
       SELECT ph.p, max(min(x.mx)) OVER (ORDER BY ph.p) - interval '1 minute' AS wm
         FROM phases ph JOIN LATERAL (SELECT partition, max(changed_at) AS mx FROM ref_changes
                                        WHERE ${phaseOf} <= ph.p GROUP BY partition) x ON true
        GROUP BY ph.p HAVING count(*) = ${DIM_PARTITIONS}),
     fact_time AS (
       SELECT ph.p, max(min(x.mx)) OVER (ORDER BY ph.p) AS t
         FROM phases ph JOIN LATERAL (SELECT partition, max(event_time) AS mx FROM ref_facts
                                        WHERE ${phaseOf} <= ph.p GROUP BY partition) x ON true
        GROUP BY ph.p HAVING count(*) = ${FACT_PARTITIONS}),
     firsts AS (SELECT DISTINCT ON (event_id) event_id, customer_id, event_time, ${phaseOf} AS phase
                  FROM ref_facts ORDER BY event_id, ${phaseOf}),
     decided AS (
       SELECT f.*, (SELECT min(d.p) FROM dim_time d JOIN fact_time s USING (p)
                     WHERE d.p >= f.phase
                       AND (d.wm > f.event_time OR s.t - f.event_time >= interval '${WAIT_FOR_MINUTES} minutes')) AS decided_in
         FROM firsts f)`;
}
