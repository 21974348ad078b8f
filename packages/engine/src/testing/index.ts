// Test helpers shared with other packages' integration tests (`@sluice/engine/testing`): a database
// and topic per test file, the ledger spec, and the exactly-once audit. Never imported by production code.
export { createEngineFixture, ledgerSpec, sinkEventIds, batchLog, silentLogger, type EngineFixture } from "./engine-fixture";
export { auditExactlyOnce, type AuditInput, type AuditedBatch } from "./exactly-once-audit";
