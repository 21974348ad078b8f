// Connections for the commands that talk to the services, from the same typed env as every process.
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import { loadEnv, ZServiceEnv } from "@sluice/config";
import type { EngineLogger } from "@sluice/engine";

export function connect(): { pool: pg.Pool; kafka: Kafka; close(): Promise<void> } {
  const env = loadEnv(ZServiceEnv);
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 4 });
  // An idle connection that drops (Postgres restarted) is reported, not an unhandled 'error' event that
  // kills the process; the next query gets a fresh connection or fails with its own error.
  pool.on("error", (err) => stderrLogger.warn({ err: err.message }, "idle Postgres connection failed"));
  const kafka = new Kafka({ brokers: env.KAFKA_BROKERS, clientId: "sluice-cli", logLevel: logLevel.ERROR });
  return { pool, kafka, close: () => pool.end() };
}

/** Engine logs go to stderr as JSON lines, so stdout stays one progress line per batch. */
export const stderrLogger: EngineLogger = {
  info: (obj, msg) => console.error(JSON.stringify({ level: "info", msg, ...obj })),
  warn: (obj, msg) => console.error(JSON.stringify({ level: "warn", msg, ...obj })),
  error: (obj, msg) => console.error(JSON.stringify({ level: "error", msg, ...obj })),
};
