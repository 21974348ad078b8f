// The alert values without I/O, for the browser (`@sluice/services/alerts/pure`).
export {
  RULE_KINDS,
  RULE_KIND_INFO,
  SEVERITIES,
  SEVERITY_ORDER,
  OUTPUT_RULE_KINDS,
  formatRuleValue,
  ruleTitle,
  thresholdUnit,
  type TRuleKind,
  type TSeverity,
} from "./rule-kinds";
