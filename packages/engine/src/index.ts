// @sluice/engine: the streaming engine as a library. It receives its resources (pg pool, kafkajs
// client, logger) and never reads the environment.
export {
  partitionGroup,
  PipelineRunner,
  type BatchResult,
  type EngineResources,
  type RunnerOptions,
} from "./runner/pipeline-runner";
export type { EngineLogger } from "./runner/engine-logger";
export { formatProgressLine } from "./runner/progress";
export { readProgressRecord, type BatchProgress } from "./store/progress-record";
export type { OutputProgress } from "./output/output-progress";
export { emptyOutputOutcomes } from "./output/screen-output";
export type { LatencyPercentiles } from "./runner/latency";
export {
  registerPipelineVersion,
  type RegisteredVersion,
  type RegisterOptions,
} from "./store/register-version";
export {
  formatStateFindings,
  IncompatibleStateError,
  previewRegistration,
  type RegistrationPreview,
} from "./store/version-compatibility";
export {
  checkpointJoinSql,
  findCheckpoint,
  loadCheckpoint,
  lockCheckpoint,
  nextBatchId,
  nextBatchIdSql,
  presetStartingOffsets,
  readLeaseEpoch,
  readLeaseOwners,
  resetCheckpoint,
  type Checkpoint,
  type StoredCheckpoint,
} from "./store/checkpoint-store";
export { nextGroupBatchId, nextGroupBatchIdSql, readGroupLeaseEpoch } from "./store/group-checkpoint-store";
export type { PartitionGroup } from "./store/partition-group";
export {
  findPlannedBatch,
  findUnfinishedPlan,
  firstLineageOffsets,
  type RecordedPlan,
} from "./store/offset-log-store";
export { LINEAGE_SQL } from "./store/version-lineage";
export { KafkaSource, runnerGroupPrefix } from "./source/kafka-source";
export type { OffsetRange, PartitionOffsets, RecordSource, SourceRecord } from "./source/source";
export { planBatch } from "./plan/plan-batch";
export {
  isRetriable,
  EngineError,
  FencedError,
  SupersededError,
  ExpectationFailedError,
  ConfigurationError,
  RetriableError,
  InvariantError,
} from "./errors";
export {
  COUNTED_OUTCOMES,
  outcomeColumn,
  OUTCOMES,
  perOutcome,
  ZOutcomeCounts,
  type CountedOutcome,
  type Outcome,
  type OutcomeColumn,
  type OutcomeCounts,
} from "./batch/outcomes";
export {
  openRequeuedDeliveries,
  REQUEUED_PER_TURN,
  type RequeuedDeliveries,
  type RequeuedReport,
} from "./webhook/requeued-deliveries";
export { dryRunBatch, type DryRunResult, type DryRunRow } from "./dry-run/dry-run-batch";
export { readSample, type Sample, type SampleRequest } from "./dry-run/read-sample";
export type { RowVerdict } from "./batch/process-batch";
export { registerPipelineVersionIn } from "./store/register-version";
export type { SqlClient } from "./store/sql-client";
export { claimName, SinkClaimError, sinkClaimRefusals } from "./store/sink-claims";
export { DimensionPipelineError, judgeDimensionPipeline } from "./join/dimension-pipeline";
export { migrateSinkTable, sinkTableChanges, type SinkTableChanges } from "./store/migrate-sink-table";
export {
  physicalSinkTable,
  physicalSql,
  servingName,
  SINK_SCHEMA,
  type SinkTableMap,
} from "./store/physical-sink-table";
export { loadSinkTables, serveVersion } from "./store/serving-views";
export { fenceRunners, retireVersion, switchServing } from "./store/switch-serving";
export {
  inferFieldType,
  mergeFieldTypes,
  DRIFT_SAMPLES,
  type DriftField,
  type SchemaDrift,
} from "./batch/schema-drift";
export { contractChecker } from "./batch/contract";
export { sumOutcomesWithin, type OutcomeTotals } from "./store/outcome-totals";
