// @sluice/workers as a library: the worker app itself, for embedding in tests. Queueing batches for
// the workers is @sluice/queue's.
export { startWorkerApp, type WorkerApp, type WorkerAppConfig } from "./app";
