// The console's clients of the workers' infrastructure. Queues a started or resumed pipeline's first batch job at once (the same BullMQ job the workers'
// reconciler would queue within WORKER_RECONCILE_INTERVAL_MS), so the console's lifecycle buttons take
// effect without waiting. The job id is derived from the scheduling turn, so this and the reconciler
// never queue a turn twice. Redis unreachable: the command still succeeded in Postgres, the reconciler
// queues the job later; logged, never an error for the person who clicked.
import "server-only";
import { kafkaTopicOffsets, type TBatchScheduler, type TTopicOffsets } from "@sluice/services";
import { Kafka, logLevel } from "kafkajs";
import { BatchQueue } from "@sluice/queue";
import { Redis } from "ioredis";
import { webEnv } from "./env";
import { logger } from "./logger";

const holder = globalThis as typeof globalThis & {
  __sluiceScheduler?: TBatchScheduler;
  __sluiceTopicOffsets?: TTopicOffsets;
};

/** Partition bounds and offsets-for-times from Kafka, for checkpoint reset requests (an admin client per call). */
export function topicOffsets(): TTopicOffsets {
  holder.__sluiceTopicOffsets ??= kafkaTopicOffsets(
    new Kafka({
      clientId: "sluice-console",
      brokers: webEnv().KAFKA_BROKERS,
      logLevel: logLevel.NOTHING,
      retry: { retries: 2 },
    }),
  );
  return holder.__sluiceTopicOffsets;
}

export function batchScheduler(): TBatchScheduler {
  holder.__sluiceScheduler ??= create();
  return holder.__sluiceScheduler;
}

function create(): TBatchScheduler {
  const env = webEnv();
  const connection = new Redis(env.REDIS_URL, {
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    lazyConnect: true,
  });
  connection.on("error", () => undefined);
  const queue = new BatchQueue(env.WORKER_QUEUE, connection);
  return {
    scheduleTurn: (turn) =>
      queue.scheduleTurn(turn).catch((err: Error) => {
        logger().warn(
          { err, pipelineVersionId: turn.pipelineVersionId },
          "could not queue the first batch; the workers' reconciler will",
        );
      }),
  };
}
