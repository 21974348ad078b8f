// A second ceiling, with the database in it: the simplest loader that lands the same topic in
// Postgres. The same reads as the raw ceiling; every value is JSON-parsed and, per fetched batch, the
// parseable ones are inserted as (event_id primary key, payload jsonb) with one bulk statement —
// at-least-once, no contract, no expectations, no dedup state, no checkpoint. It is what Postgres and
// kafkajs can do on this machine at all, so the pipeline's rate read against it shows the cost of
// correctness, where the raw ceiling also charges the pipeline for Postgres' own work.
import type { Kafka } from "kafkajs";
import type pg from "pg";
import { readTopic } from "./read-topic";

export interface LandingResult {
  messages: number;
  landed: number;
  elapsedMs: number;
}

export async function landTopic(
  kafka: Kafka,
  pool: pg.Pool,
  topic: string,
  total: number,
): Promise<LandingResult> {
  await pool.query(`CREATE TABLE landing (event_id text PRIMARY KEY, payload jsonb NOT NULL)`);
  let messages = 0;
  let landed = 0;
  const elapsedMs = await readTopic(kafka, "landing", topic, total, async (batch) => {
    const values: string[] = [];
    for (const m of batch) {
      messages++;
      if (!m.value) continue;
      const text = m.value.toString("utf8");
      try {
        const v: unknown = JSON.parse(text);
        if (
          v &&
          typeof v === "object" &&
          typeof (v as { event_id?: unknown }).event_id === "string" &&
          !text.includes("\\u0000")
        )
          values.push(text);
      } catch {
        // not JSON: a loader like this one drops it
      }
    }
    if (values.length === 0) return;
    const res = await pool.query(
      `INSERT INTO landing SELECT r->>'event_id', r FROM jsonb_array_elements($1::jsonb) AS r ON CONFLICT DO NOTHING`,
      [`[${values.join(",")}]`],
    );
    landed += res.rowCount ?? 0;
  });
  return { messages, landed, elapsedMs };
}
