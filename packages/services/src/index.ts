export { seedDemo, DEMO_TEAMS, DEMO_USERS, DEMO_SSO_MAPPINGS } from "./demo/seed-demo";
export { loadDemoPipelineSpecs } from "./demo/demo-pipelines";
export { ROLES, hasRole, type TRole } from "./auth/roles";
export { getActor, getActorByEmail, type TActor, type TActorTeam } from "./auth/actor";
export { ACTIONS, ACTION_NAMES, type TAction, type TActionRule } from "./auth/actions";
export {
  authorizeAction,
  decideAction,
  decideActionRole,
  decideRole,
  mayDoAction,
  requireAction,
  NotAllowedError,
  type TDecision,
  type TResolvedTarget,
  type TTargetRef,
} from "./auth/authorize-action";
export {
  consumeSignInAttempt,
  clearSignInAttempts,
  describeRetry,
  describeThrottle,
  SIGN_IN_LIMITS,
  type TSignInAttempt,
  type TThrottleDecision,
  type TThrottleScope,
} from "./auth/throttle-sign-in";
export {
  recordAuditEvent,
  ZAuditEventInput,
  ZAuditOrigin,
  type TAuditEventInput,
  type TAuditOrigin,
  type TAuditWho,
} from "./audit/record-audit-event";
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
export {
  runPhase,
  applyRunCommand,
  RunCommandError,
  RUN_COMMANDS,
  type TRunCommand,
  type TRunPhase,
  type TRunStatus,
  type TDesiredState,
} from "./runs/run-state";
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
  type TRunCommandOptions,
} from "./runs/run-pipeline-command";
export {
  claimBatchTurn,
  holdsBatchTurn,
  releaseBatchAttempt,
  type TBatchTurnClaim,
  type TBatchTurnRef,
  type TClaimOptions,
} from "./runs/claim-batch-turn";
export { DEFAULT_MAX_UNFINISHED_ATTEMPTS, describeRanges, poisonBatchMessage } from "./runs/poison-batch";
export {
  finishBatchTurn,
  nextBatchDelay,
  type TBatchTurnFinish,
  type TBatchOutcome,
} from "./runs/finish-batch-turn";
export { failBatchTurn, type TBatchError, type TBatchTurnFailure } from "./runs/fail-batch-turn";
export { stopSupersededRun } from "./runs/stop-superseded-run";
export { findScheduledRuns, getScheduledRun } from "./runs/find-scheduled-runs";
export type { TGroupTurnRef, TScheduledRun } from "./runs/scheduled-turn";
export { getPipelineRun, type TPipelineRunView } from "./runs/get-pipeline-run";
export { WORKER_HEARTBEAT_TIMEOUT_MS } from "./runs/run-record";
export {
  recordWorkerHeartbeat,
  markWorkerStopped,
  type TWorkerIdentity,
} from "./workers/record-worker-heartbeat";
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
export {
  findBatchProgress,
  ZFindBatchProgressInput,
  type TFindBatchProgressInput,
  type TBatchProgress,
  type TBatchSummary,
  type TBatchOutputSummary,
} from "./progress/find-batch-progress";
export {
  batchProgressView,
  type TBatchProgressView,
  type TPartitionProgress,
  type TOutcomeCounts,
} from "./progress/batch-progress-view";
export {
  outputProgressViews,
  joinProgressView,
  OUTPUT_OUTCOMES,
  type TOutputProgressView,
  type TOutputOutcome,
  type TJoinProgressView,
} from "./progress/combine-progress-view";
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

// Signals and time series: the console's charts and fleet view, and (later) the alert evaluator.
export {
  bucketRange,
  presetRange,
  ZTimeRange,
  RANGE_PRESETS,
  MAX_POINTS,
  GRAIN_SECONDS,
  type TTimeRange,
  type TRangePreset,
  type TBucketing,
} from "./signals/time-range";
export {
  fleetStatus,
  isBacklogRising,
  firstLine,
  FLEET_STATUSES,
  STATUS_ORDER,
  type TFleetStatus,
  type TFleetStatusInput,
  type TFleetStatusResult,
} from "./signals/fleet-status";
export {
  offsetPoints,
  backlogSeconds,
  partitionBacklog,
  type TOffsetSample,
  type TOffsetPoint,
} from "./signals/offset-signals";
export {
  freshnessOf,
  completenessOf,
  correctnessOf,
  type TFreshness,
  type TCompleteness,
  type TCorrectness,
} from "./signals/signal-values";
export {
  pipelineFlow,
  ZFlowSpec,
  type TPipelineFlow,
  type TFlowNode,
  type TFlowEdge,
  type TFlowTotals,
  type TFlowJoinTotals,
} from "./signals/pipeline-flow";
export {
  findPipelineSeries,
  ZFindPipelineSeriesInput,
  type TFindPipelineSeriesInput,
  type TPipelineSeries,
  type TSeriesMarker,
} from "./signals/find-pipeline-series";
export type { TSeriesPoint, TPartitionPoint, TExpectationSeries } from "./signals/series-points";
export type { TOutputSeries, TOutputPoint } from "./signals/output-series";
export {
  getPipelineSignals,
  targetsOf,
  ZGetPipelineSignalsInput,
  type TGetPipelineSignalsInput,
  type TPipelineSignals,
} from "./signals/get-pipeline-signals";
export { findFleet, type TFleetRow } from "./signals/find-fleet";
export {
  findPartitionOffsets,
  ZFindPartitionOffsetsInput,
  type TFindPartitionOffsetsInput,
  type TCheckpointView,
  type TPartitionOffsets,
} from "./signals/find-partition-offsets";
export { findSampledVersions, type TSampledVersion } from "./signals/find-sampled-versions";
export {
  recordOffsetSamples,
  pruneOffsetSamples,
  OFFSET_SAMPLE_RETENTION_MS,
  type TOffsetSampleInput,
} from "./signals/record-offset-samples";
export {
  getBatchDetail,
  ZGetBatchDetailInput,
  type TGetBatchDetailInput,
  type TBatchDetail,
} from "./progress/get-batch-detail";
export { findPipelineVersions, type TPipelineVersionSummary } from "./pipelines/find-pipeline-versions";
export { applySsoGrants, groupsFromClaim, resolveSsoGrants, type TSsoGrants } from "./sso/sso-grants";
export { AdminChangeError, type TAdminContext, type TBootstrapActor } from "./admin/admin-change";
export { verifyPassword } from "./auth/hash-password";
export { findUsers, type TAdminUser } from "./admin/find-users";
export {
  createUser,
  FirstAdminExistsError,
  ZCreateUserInput,
  ZEmail,
  ZNewPassword,
  ZRole,
  type TCreateUserInput,
} from "./admin/create-user";
export {
  resetUserPassword,
  setUserDisabled,
  setUserRole,
  ZResetUserPasswordInput,
  ZSetUserDisabledInput,
  ZSetUserRoleInput,
} from "./admin/change-user";
export {
  createTeam,
  findAdminTeams,
  setTeamMember,
  setTeamOnCall,
  ZCreateTeamInput,
  ZSetTeamOnCallInput,
  ZTeamMemberInput,
  type TAdminTeam,
} from "./admin/teams";
export * from "./contact-points";
export {
  createSsoMapping,
  deleteSsoMapping,
  findSsoMappings,
  ZCreateSsoMappingInput,
  ZDeleteSsoMappingInput,
  type TSsoMappingView,
} from "./admin/sso-mappings";
export { commandPipeline } from "./runs/command-pipeline";
export { isSpecRegistered } from "./pipelines/is-spec-registered";
export * from "./alerts";
export { withoutReceiverAnswers } from "./receivers/without-receiver-answers";

// Authoring pipelines in the console: drafts checked as you type, dry runs, registration, history.
export {
  checkDraft,
  lenientContractFields,
  type TDraftCheck,
  type TDraftRegistration,
  type TContractField,
} from "./drafts/check-draft";
export { dryRunDraft, type TDryRunDraft } from "./drafts/dry-run-draft";
export { submitPipelineDraft, type TSubmitDraftResult } from "./drafts/submit-pipeline-draft";
export { needsApproval, approvalRefusal, type TApproval } from "./drafts/needs-approval";
export {
  findVersionHistory,
  diffVersions,
  type TVersionHistoryEntry,
  type TVersionDiff,
} from "./drafts/find-version-history";
export {
  ZCheckDraftInput,
  ZDryRunDraftInput,
  ZSubmitDraftInput,
  ZSampleRequest,
  MAX_DRAFT_CHARS,
  MAX_SAMPLE_PER_PARTITION,
  MAX_SAMPLE_RECORDS,
  type TSampleRequest,
  type TSubmitDraftInput,
} from "./drafts/draft-input";
export {
  findAuditEvents,
  exportAuditEventsCsv,
  csvField,
  ZFindAuditEventsInput,
  type TFindAuditEventsInput,
  type TAuditEventView,
} from "./audit/find-audit-events";

// Change requests: checkpoint resets (and, later, schema changes) that a second person approves.
export {
  CHANGE_REQUEST_STATUSES,
  ChangeRequestError,
  findChangeRequests,
  getChangeRequest,
  type TChangeRequestKind,
  type TChangeRequestStatus,
  type TChangeRequestView,
} from "./change-requests/change-request-view";
export {
  requestCheckpointReset,
  ZRequestCheckpointResetInput,
  type TRequestCheckpointResetInput,
} from "./change-requests/request-checkpoint-reset";
export {
  resetImpact,
  shapeOfSpec,
  ZResetState,
  ZResetTarget,
  type TPartitionImpact,
  type TResetImpact,
  type TResetShape,
  type TResetState,
  type TResetTarget,
} from "./change-requests/reset-impact";
export {
  kafkaTopicOffsets,
  type TPartitionBounds,
  type TTopicOffsets,
} from "./change-requests/topic-offsets";
export {
  approveChangeRequest,
  cancelChangeRequest,
  commentOnChangeRequest,
  rejectChangeRequest,
  ZCommentChangeRequestInput,
  ZDecideChangeRequestInput,
  type TDecideChangeRequestInput,
  type TDecideHooks,
} from "./change-requests/decide-change-request";
export { findCheckpointResets, type TCheckpointResetView } from "./change-requests/find-checkpoint-resets";
export {
  findProducerFaults,
  findProducerFaultRequestIds,
  type TProducerFault,
} from "./change-requests/producer-faults";
export {
  requestSchemaChange,
  requestSchemaChangeFromText,
  schemaChangeImpact,
  ZRequestSchemaChangeInput,
  type TObservedField,
  type TSchemaChangeImpact,
} from "./change-requests/request-schema-change";
export {
  observeSchemaDrift,
  proposeFromDrift,
  safeWidening,
  SYSTEM_REQUESTER,
  type TObserveResult,
} from "./change-requests/observe-schema-drift";
export {
  applySchemaChange,
  ApplyRefusedError,
  type TAppliedSchemaChange,
} from "./change-requests/apply-schema-change";
export {
  findFixedQuarantine,
  reasonKind,
  type TFixedQuarantine,
} from "./change-requests/find-fixed-quarantine";
export {
  discardDeadLetters,
  MAX_DISCARD,
  ZDiscardDeadLettersInput,
  type TDiscardDeadLettersInput,
  type TDiscardDeadLettersResult,
} from "./dead-letters/discard-dead-letters";
export {
  deadLetterCondition,
  ZDeadLetterFilter,
  type TDeadLetterFilter,
} from "./dead-letters/dead-letter-filter";
export {
  BROWSE_COUNT_LIMIT,
  browseDeadLetters,
  inspectDeadLetter,
  ZBrowseDeadLettersInput,
  ZInspectDeadLetterInput,
  type TBrowsedDeadLetter,
  type TDeadLetterReplayView,
  type TDeadLetterPage,
  type TInspectedDeadLetter,
} from "./dead-letters/browse-dead-letters";
export {
  requestDeadLetterReplay,
  MAX_REPLAY,
  ZRequestDeadLetterReplayInput,
  type TRequestDeadLetterReplayInput,
  type TRequestDeadLetterReplayResult,
  type TDeadLetterReplayRefusal,
} from "./dead-letters/request-dead-letter-replay";
export { reconcileSinks } from "./rollouts/reconcile-sinks";
export {
  runReconciliation,
  type TStoredReconciliation,
  type TReconciliationRequester,
} from "./rollouts/run-reconciliation";
export { findLatestReconciliation, findLatestReconciliations } from "./rollouts/find-latest-reconciliation";
export { reconcileRollout, type TRolloutReconciliation } from "./rollouts/reconcile-rollout";
export { reconcileRunningRollouts, type TReconcilePass } from "./rollouts/reconcile-running-rollouts";
export { retireKeptVersions, type TRetiredVersion } from "./rollouts/retire-kept-versions";
export { promotionGate, type TPromotionGate, type TGateReconciliation } from "./rollouts/promotion-gate";
export type {
  TReconcileInput,
  TReconcileSide,
  TReconcileRange,
  TReconciliationReport,
  TReconciliationStatus,
  TOutcomeComparison,
  TValueDifference,
  TRowValues,
} from "./rollouts/reconciliation-report";
export {
  DEFAULT_KEEP_PREVIOUS_HOURS,
  startRollout,
  ZRolloutStart,
  ZStartRolloutInput,
  type TRolloutStart,
  type TStartedRollout,
} from "./rollouts/start-rollout";
export {
  requestPromotion,
  ZRequestPromotionInput,
  ZRolloutStepInput,
  type TRequestPromotionInput,
  type TRolloutStepInput,
} from "./rollouts/request-promotion";
export { abortRollout, rollbackRollout } from "./rollouts/rollback-rollout";
export { findRollout, type TRolloutView } from "./rollouts/find-rollout";
export { RolloutError } from "./rollouts/rollout-error";
export { ServiceError, type TServiceErrorKind } from "./service-error";
export { findRolloutPage, type TRolloutPage, type TRolloutSide } from "./rollouts/find-rollout-page";
export {
  rolloutPhase,
  rolloutProgress,
  type TRolloutPhase,
  type TRolloutProgress,
} from "./rollouts/rollout-phase";
