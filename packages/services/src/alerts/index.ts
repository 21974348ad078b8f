// Alerts: rules, evaluation, episodes, silences and notifications (docs/alerting.md).
export {
  RULE_KINDS,
  RULE_KIND_INFO,
  PIPELINE_RULE_KINDS,
  FLEET_RULE_KINDS,
  SEVERITIES,
  SEVERITY_ORDER,
  type TRuleKind,
  type TSeverity,
  type TRuleKindInfo,
  type TMeasure,
  formatRuleValue,
  thresholdUnit,
} from "./rule-kinds";
export type { TPipelineAlertSignals, TFleetAlertSignals, TBacklogPoint } from "./alert-signals";
export {
  evaluatePipelineCondition,
  evaluateFleetCondition,
  isInputSteady,
  type TCondition,
} from "./evaluate-condition";
export { stepRule, isSilenced, type TRuleStep, type TNotifyKind } from "./step-rule";
export { testFacts, type TNotificationFacts, type TNotificationKind } from "./notification-facts";
export { queueNotifications, NO_CONTACT_POINT } from "./queue-notifications";
export { findPipelineAlertSignals, findFleetAlertSignals } from "./find-alert-signals";
export { ensureDefaultRules } from "./ensure-default-rules";
export {
  takeAlertLease,
  releaseAlertLease,
  getAlertLease,
  AlertEvaluatorFencedError,
  type TEvaluatorId,
} from "./alert-lease";
export {
  runAlertEvaluation,
  type TAlertEvaluationOptions,
  type TAlertEvaluationResult,
} from "./run-alert-evaluation";
export {
  deliverAlertNotifications,
  notificationRetryDelay,
  type TDeliveryOptions,
  MAX_ATTEMPTS as ALERT_NOTIFICATION_MAX_ATTEMPTS,
} from "./deliver-alert-notifications";
export { AlertChangeError, type TAlertActor } from "./alert-change";
export {
  acknowledgeAlert,
  resolveAlert,
  ZRespondToAlertInput,
  type TRespondToAlertInput,
} from "./respond-to-alert";
export {
  silenceAlerts,
  endSilence,
  ZSilenceAlertsInput,
  ZEndSilenceInput,
  MAX_SILENCE_MS,
  type TSilenceAlertsInput,
  type TEndSilenceInput,
} from "./silence-alerts";
export { updateAlertRule, ZUpdateAlertRuleInput, type TUpdateAlertRuleInput } from "./update-alert-rule";
export { createAlertRule, ZCreateAlertRuleInput, type TCreateAlertRuleInput } from "./create-alert-rule";
export {
  findAlerts,
  getPipelineAlerts,
  findFiringAlertsByPipeline,
  findAlertNotifications,
  ZFindAlertsInput,
  type TFindAlertsInput,
  type TAlertView,
  type TAlertState,
  type TAlertRuleView,
  type TPipelineAlerts,
  type TFiringSummary,
  type TAlertNotificationView,
  type TAlertDelivery,
} from "./find-alerts";
