// The engine's resources for the console's authoring pages — a pg pool (registration takes an
// advisory lock and writes versions in one transaction, as the CLI does) and a Kafka client (dry
// runs read a sample) — made on first use and kept per process, like the Prisma client.
import "server-only";
import { createPool } from "@sluice/db";
import { Kafka, logLevel } from "kafkajs";
import { webEnv } from "./env";
import { logger } from "./logger";
import type { TDataPlane } from "./trpc/context";

const holder = globalThis as typeof globalThis & { __sluiceDataPlane?: TDataPlane };

export function dataPlane(): TDataPlane {
  if (!holder.__sluiceDataPlane) {
    const env = webEnv();
    const pool = createPool({
      connectionString: env.DATABASE_URL,
      max: 4,
      onConnectionError: (err) => logger().warn({ err }, "data-plane connection error"),
    });
    const kafka = new Kafka({
      clientId: "sluice-console",
      brokers: env.KAFKA_BROKERS,
      logLevel: logLevel.NOTHING,
      retry: { retries: 2 },
    });
    holder.__sluiceDataPlane = { pool, kafka };
  }
  return holder.__sluiceDataPlane;
}
