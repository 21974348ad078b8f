// Samples, every interval, each non-stopped pipeline version's topic: the latest offset of every
// partition (one Kafka admin request per topic) beside the version's committed offsets. These samples
// are the backlog and input-rate charts — they keep coming while a version is paused, failed or its
// batches are stuck, which is exactly when on-call needs them. Every worker runs it; the first sample
// of a 10-second bucket wins (recordOffsetSamples), so more workers cost a few redundant reads only.
import type { PrismaClient } from "@sluice/db";
import type { Admin, Kafka } from "kafkajs";
import {
  findSampledVersions,
  pruneOffsetSamples,
  recordOffsetSamples,
  type TOffsetSampleInput,
} from "@sluice/services";
import type { Logger } from "../logger";
import { startPeriodicLoop } from "../periodic-loop";

export interface OffsetSampler {
  /** One pass now (tests). Resolves with the samples written. */
  tick(): Promise<number>;
  stop(): Promise<void>;
}

/** Old samples are pruned about once an hour per worker. */
const PRUNE_EVERY_MS = 3600_000;

export function startOffsetSampler(opts: {
  db: PrismaClient;
  kafka: Kafka;
  intervalMs: number;
  logger: Logger;
}): OffsetSampler {
  const { db, logger } = opts;
  let admin: Admin | undefined;
  let lastPrune = 0;

  async function pass(): Promise<number> {
    const versions = await findSampledVersions(db);
    if (versions.length === 0) return 0;
    if (!admin) {
      admin = opts.kafka.admin({ retry: { retries: 0 } });
      await admin.connect();
    }
    const samples: TOffsetSampleInput[] = [];
    for (const topic of new Set(versions.map((v) => v.topic))) {
      let offsets: { partition: number; high: string }[];
      try {
        offsets = await admin.fetchTopicOffsets(topic);
      } catch (err) {
        // A topic that does not exist (yet) has no backlog to chart; the pipeline page says so elsewhere.
        logger.debug?.({ err, topic }, "offset sample skipped");
        continue;
      }
      for (const v of versions.filter((x) => x.topic === topic)) {
        for (const o of offsets) {
          if (v.partitions && !v.partitions.includes(o.partition)) continue;
          samples.push({
            pipelineVersionId: v.pipelineVersionId,
            partition: o.partition,
            latestOffset: Number(o.high),
            committedOffset: v.committed[String(o.partition)] ?? null,
          });
        }
      }
    }
    const written = await recordOffsetSamples(db, samples);
    if (Date.now() - lastPrune > PRUNE_EVERY_MS) {
      lastPrune = Date.now();
      await pruneOffsetSamples(db);
    }
    return written;
  }

  const loop = startPeriodicLoop({
    pass,
    intervalMs: opts.intervalMs,
    onError: async (err) => {
      logger.warn({ err }, "offset sample failed; retrying next interval");
      // A broken admin connection is rebuilt on the next pass.
      await admin?.disconnect().catch(() => undefined);
      admin = undefined;
    },
  });
  return {
    tick: loop.tick,
    async stop() {
      await loop.stop();
      await admin?.disconnect().catch(() => undefined);
    },
  };
}
