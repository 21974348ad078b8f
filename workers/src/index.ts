// @sluice/workers as a library: what other processes (console, CLI, quick start, benchmarks) need to
// queue batches for the workers, and the worker app itself for embedding in tests.
export { BatchQueue, batchRetryDelay, type TEnsureTurnResult } from "./batches/batch-queue";
export {
  JOB_BATCH_RUN,
  ZBatchRunPayload,
  batchRunJobId,
  type TBatchRunPayload,
} from "./jobs/job-definitions";
export { startWorkerApp, type WorkerApp, type WorkerAppConfig } from "./app";
