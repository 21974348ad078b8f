export { hashPassword, verifyPassword } from "./auth/password";
export { seedDemo, DEMO_TEAMS, DEMO_USERS } from "./demo/seed-demo";
export { loadDemoPipelineSpecs } from "./demo/demo-pipelines";
export { ROLES, hasRole, type TRole } from "./auth/roles";
export { authenticateUser } from "./auth/authenticate-user";
export { getSessionUser, type TSessionUser } from "./users/get-session-user";
export { findPipelines, type TPipelineSummary } from "./pipelines/find-pipelines";
export { findTeams, type TTeamSummary } from "./teams/find-teams";
export {
  runHealthChecks,
  describeError,
  maskCredentials,
  type THealthCheckResult,
  type THealthProbe,
  type THealthReport,
} from "./health/run-health-checks";
export { runPhase, applyRunCommand, RunCommandError, RUN_COMMANDS, type TRunCommand, type TRunPhase, type TRunStatus, type TDesiredState } from "./runs/run-state";
export {
  runPipelineCommand,
  startPipelineRun,
  pausePipelineRun,
  resumePipelineRun,
  stopPipelineRun,
  restartPipelineRun,
  ZRunCommandInput,
  type TRunCommandInput,
  type TRunCommandResult,
  type TBatchScheduler,
} from "./runs/run-pipeline-command";
export { claimBatchTurn, type TBatchTurnClaim, type TBatchTurnRef } from "./runs/claim-batch-turn";
export { finishBatchTurn, nextBatchDelay, type TBatchTurnFinish, type TBatchOutcome } from "./runs/finish-batch-turn";
export { failBatchTurn, type TBatchError, type TBatchTurnFailure } from "./runs/fail-batch-turn";
export { stopSupersededRun } from "./runs/stop-superseded-run";
export { findScheduledRuns, getScheduledRun, type TScheduledRun } from "./runs/find-scheduled-runs";
export { getPipelineRun, type TPipelineRunView } from "./runs/get-pipeline-run";
export { WORKER_HEARTBEAT_TIMEOUT_MS } from "./runs/run-record";
export { recordWorkerHeartbeat, markWorkerStopped, type TWorkerIdentity } from "./workers/record-worker-heartbeat";
export { findWorkers, type TWorkerSummary } from "./workers/find-workers";
export {
  findWebhookDeliveries,
  summarizeWebhookDeliveries,
  ZFindWebhookDeliveriesInput,
  WEBHOOK_DELIVERY_STATUSES,
  type TFindWebhookDeliveriesInput,
  type TWebhookDeliveries,
  type TWebhookDeliveryView,
  type TWebhookDeliveryStatus,
  type TWebhookDeliveryCounts,
  type TWebhookPipelineSummary,
} from "./webhooks/find-webhook-deliveries";
export {
  requeueFailedWebhookDeliveries,
  WebhookRequeueError,
  ZRequeueWebhookDeliveriesInput,
  type TRequeueWebhookDeliveriesInput,
  type TRequeueWebhookDeliveriesResult,
} from "./webhooks/requeue-webhook-deliveries";
export {
  getPipelineDetail,
  ZPipelineByNameInput,
  type TPipelineByNameInput,
  type TPipelineDetail,
  type TPipelineRunSummary,
} from "./pipelines/get-pipeline-detail";
export { findBatchProgress, ZFindBatchProgressInput, type TFindBatchProgressInput, type TBatchProgress, type TBatchSummary } from "./progress/find-batch-progress";
export { batchProgressView, type TBatchProgressView, type TPartitionProgress, type TOutcomeCounts } from "./progress/batch-progress-view";
export {
  summarizeDeadLetters,
  ZSummarizeDeadLettersInput,
  DEAD_LETTER_OUTCOMES,
  REASON_GROUPING,
  type TSummarizeDeadLettersInput,
  type TDeadLetterSummary,
  type TDeadLetterReasonGroup,
  type TDeadLetterRowView,
  type TDeadLetterOutcome,
} from "./dead-letters/summarize-dead-letters";
