// Job ids and their payload schemas, apart from their handlers, so producers (the console, the
// scheduler) can enqueue without importing worker code.
import { z } from "zod";

export const JOB_SYSTEM_ECHO = "system.echo";
export const ZSystemEchoPayload = z.object({ message: z.string().max(1000) });
export type TSystemEchoPayload = z.infer<typeof ZSystemEchoPayload>;

/**
 * One micro-batch of one pipeline version. `seq` is the scheduling turn (pipeline_runs.schedule_seq)
 * the job was queued for; the job id is derived from (version, turn), so queueing a turn twice is a
 * no-op. `dueAt` is when it was meant to start (for the scheduling-lag metric). A version read in
 * partition groups has one job per group turn (`group`: its number, the group count, the group's own
 * turn within the run turn `seq`); its run turn's job without `group` fans out to them.
 */
export const JOB_BATCH_RUN = "batch.run";
export const ZBatchRunPayload = z.object({
  pipelineVersionId: z.string().min(1).max(100),
  seq: z.number().int().min(0),
  dueAt: z.number().int(),
  group: z
    .object({
      no: z.number().int().min(0).max(63),
      of: z.number().int().min(2).max(64),
      seq: z.number().int().min(0),
    })
    .refine((g) => g.no < g.of, "a group's number is below the group count")
    .optional(),
});
export type TBatchRunPayload = z.infer<typeof ZBatchRunPayload>;

export function batchRunJobId(
  pipelineVersionId: string,
  seq: number,
  group?: { no: number; seq: number },
): string {
  const base = `${JOB_BATCH_RUN}.${pipelineVersionId}.${seq}`;
  return group ? `${base}.g${group.no}.${group.seq}` : base;
}

/** One alert evaluation tick (no payload), fired by a job scheduler on the alerts queue (`<WORKER_QUEUE>.alerts`). */
export const JOB_ALERTS_EVALUATE = "alerts.evaluate";
