// The alert values without I/O, for the browser (`@sluice/services/alerts/pure`).
export {
  RULE_KINDS,
  RULE_KIND_INFO,
  SEVERITIES,
  SEVERITY_ORDER,
  formatRuleValue,
  thresholdUnit,
  type TRuleKind,
  type TSeverity,
} from "./rule-kinds";
