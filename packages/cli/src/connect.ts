// Connections for the commands that talk to the services, from the same typed env as every process.
import { Kafka, logLevel, type KafkaConfig, type LogEntry } from "kafkajs";
import type pg from "pg";
import { loadEnv, ZServiceEnv, type TServiceEnv } from "@sluice/config";
import { createPool } from "@sluice/db";
import { createCliLogger, type CliLogger } from "./cli-logger";
import { requireDatabase } from "./database-ready";

export interface Services {
  env: TServiceEnv;
  pool: pg.Pool;
  kafka: Kafka;
  logger: CliLogger;
  close(): Promise<void>;
}

/** The services, once the database is known to be ready (else a CliError saying what to do). */
export async function connect(): Promise<Services> {
  const env = loadEnv(ZServiceEnv);
  await requireDatabase(env.DATABASE_URL);
  const logger = createCliLogger(env.LOG_LEVEL);
  // A connection that drops (Postgres restarting) fails the query that needed it, which is retried;
  // the drop itself is only worth a debug line.
  const pool = createPool({
    connectionString: env.DATABASE_URL,
    max: 4,
    onConnectionError: (err) => logger.debug({ err: err.message }, "Postgres connection failed"),
  });
  const kafka = new Kafka({
    brokers: env.KAFKA_BROKERS,
    clientId: "sluice-cli",
    ...kafkaLogging(logger, env.LOG_LEVEL),
  });
  return { env, pool, kafka, logger, close: () => pool.end() };
}

/**
 * kafkajs' own log, at debug: during an outage it writes several JSON lines per connection attempt,
 * while what a person needs is the run's one line per retry (retry.ts). LOG_LEVEL=debug shows its
 * info and above, trace its debug lines too; otherwise kafkajs logs nothing.
 */
function kafkaLogging(
  logger: CliLogger,
  level: TServiceEnv["LOG_LEVEL"],
): Pick<KafkaConfig, "logLevel" | "logCreator"> {
  return {
    logLevel: level === "trace" ? logLevel.DEBUG : level === "debug" ? logLevel.INFO : logLevel.NOTHING,
    logCreator:
      () =>
      ({ namespace, log: { message, timestamp: _timestamp, logger: _logger, ...fields } }: LogEntry) =>
        logger.debug({ ...fields }, `kafkajs ${namespace}: ${message}`),
  };
}
