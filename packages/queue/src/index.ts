// @sluice/queue: the BullMQ queue client and the job definitions (ids and payload schemas), apart
// from the handlers, so the console, the CLI, the quick start and the benchmarks queue batches for the
// workers without importing the worker app.
export { BATCH_BACKOFF_TYPE, BatchQueue, batchRetryDelay, type TEnsureTurnResult } from "./batch-queue";
export {
  JOB_ALERTS_EVALUATE,
  JOB_BATCH_RUN,
  JOB_SYSTEM_ECHO,
  ZBatchRunPayload,
  ZSystemEchoPayload,
  batchRunJobId,
  type TBatchRunPayload,
  type TSystemEchoPayload,
} from "./job-definitions";
