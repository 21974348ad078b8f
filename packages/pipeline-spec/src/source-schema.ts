// The source sections: the Kafka topic read and the event time its rows carry. Shared by the
// pipeline's own source and a join's dimension changelog (join-schema.ts).
import { z } from "zod";
import { ZColumnRef, ZDuration, ZPositiveDuration } from "./spec-primitives";

const KAFKA_TOPIC = /^[A-Za-z0-9._-]{1,249}$/;

export const ZKafkaSource = z.strictObject({
  topic: z.string().refine((t) => KAFKA_TOPIC.test(t), {
    error: (iss) => `${JSON.stringify(iss.input)} is not a Kafka topic name: use letters, digits, ., _ and -`,
  }),
  /**
   * Where a version that has read nothing yet starts: `latest` records the end offsets at its first run
   * in its checkpoint. A partition added to the topic later is read from its beginning either way.
   */
  startingOffsets: z.enum(["earliest", "latest"]).default("earliest"),
  /** Upper bound on offsets read per micro-batch, spread over partitions. */
  maxOffsetsPerTrigger: z.number().int().positive().max(10_000_000).default(10_000),
  /** Read only these partitions (default: all). */
  partitions: z
    .array(z.number().int().nonnegative())
    .min(1)
    .refine((ps) => new Set(ps).size === ps.length, { error: "list each partition once" })
    .optional(),
});

/** The pipeline's own source: a Kafka topic, optionally read in partition groups (a join's changelog is one reader). */
export const ZSource = z.strictObject({
  kafka: ZKafkaSource.extend({
    /**
     * Partition groups: partition p belongs to group p mod N, and each group is planned, read,
     * processed and committed as its own micro-batch by its own runner, concurrently (default 1).
     */
    parallelism: z.number().int().min(1).max(64).optional(),
  }),
});

export const ZEventTime = z.strictObject({
  /** A required timestamp field of the contract. */
  column: ZColumnRef,
  /** watermark = max(event time seen) − watermarkDelay. */
  watermarkDelay: ZDuration,
  /**
   * The watermark is the minimum over partitions of (max event time − delay); a partition that has
   * read no new records for this long stops holding it back (default 1m).
   */
  idleTimeout: ZPositiveDuration.optional(),
});
