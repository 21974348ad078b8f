// Test helpers shared with other packages' integration tests (`@sluice/engine/testing`): a database
// and topic per test file, the ledger spec, the exactly-once audit and the local webhook receiver. Never
// imported by production code.
export {
  createEngineFixture,
  drainPipeline,
  drainRunner,
  ledgerSpec,
  sinkEventIds,
  batchLog,
  silentLogger,
  type EngineFixture,
} from "./engine-fixture";
export { auditExactlyOnce, type AuditInput, type AuditedBatch } from "./exactly-once-audit";
export { startWebhookReceiver, type WebhookReceiver, type ReceivedRequest } from "./webhook-receiver";
export {
  spawnSluice,
  runSluice,
  sluiceResult,
  specDir,
  committedBatchIds,
  type SluiceProcess,
  type SluiceResult,
} from "./sluice-process";
export { sendLedgerEvents, sendPoisonEvents, type SentEvents } from "./ledger-events";
export {
  settlementsSpec,
  settlementViewsSpec,
  settlementsWorkload,
  tumbling5mLateness3mSql,
  SINK_COLUMNS,
  EXPECTED_MEASURES,
} from "./settlements";
export {
  loadReferenceEvents,
  loadReferenceBatches,
  judgedEventsSql,
  expectBatchesCoverTopic,
} from "./reference-events";
// The engine's bulk insert, for the benchmark that compares it with COPY (bench/src/ledger-writes.ts).
export { bulkSelect, type BulkColumn } from "../store/bulk";
