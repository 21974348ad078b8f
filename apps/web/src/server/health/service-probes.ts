// One probe per service the console depends on. Each opens a short-lived connection with tight
// timeouts and no retries, so a dead service costs one failed attempt, never a reconnect storm.
import type { PrismaClient } from "@sluice/db";
import type { THealthProbe } from "@sluice/services";
import { Redis } from "ioredis";
import { Kafka, logLevel } from "kafkajs";

const CONNECT_TIMEOUT_MS = 1500;

export function postgresProbe(db: PrismaClient): THealthProbe {
  return async () => {
    await db.$queryRaw`select 1`;
  };
}

export function redisProbe(redisUrl: string): THealthProbe {
  return async (signal) => {
    const client = new Redis(redisUrl, {
      lazyConnect: true,
      connectTimeout: CONNECT_TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    // The socket error (e.g. ECONNREFUSED) says more than the "Connection is closed." that
    // connect() rejects with once retries are off, so report that one.
    let socketError: Error | undefined;
    client.on("error", (err: Error) => (socketError ??= err));
    signal.addEventListener("abort", () => client.disconnect());
    try {
      await client.connect();
      const reply = await client.ping();
      if (reply !== "PONG") throw new Error(`unexpected PING reply ${JSON.stringify(reply)}`);
    } catch (err) {
      throw socketError ?? err;
    } finally {
      client.disconnect();
    }
  };
}

export function kafkaProbe(brokers: string[]): THealthProbe {
  return async (signal) => {
    const kafka = new Kafka({
      clientId: "sluice-web-health",
      brokers,
      connectionTimeout: CONNECT_TIMEOUT_MS,
      requestTimeout: 1800,
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    signal.addEventListener("abort", () => void admin.disconnect().catch(() => undefined));
    try {
      await admin.connect();
      // A metadata request: the broker is up and answering the protocol, not just accepting TCP.
      const cluster = await admin.describeCluster();
      if (cluster.brokers.length === 0) throw new Error("metadata listed no brokers");
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  };
}
