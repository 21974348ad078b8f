// @sluice/pipeline-spec: the pipeline spec shared by the console, the workers and the sluice CLI.
// Reference: docs/pipeline-spec.md.

// Parsing and validation
export { parseSpec, parseSpecOrThrow, type TParseOptions } from "./parse-spec";
export { nestingProblem, MAX_NESTING } from "./nesting-depth";
export { validateSpec, ZValidPipelineSpec, type TValidationResult } from "./validate-spec";
export { SpecValidationError, formatPath, formatSpecErrors, type TSpecError } from "./errors";

// Schema and types
export {
  ZPipelineSpec,
  ZPipelineSpecShape,
  ZKafkaSource,
  ZEventTime,
  ZDedupe,
  ZExpectation,
  ZTransform,
  ZTrigger,
  EXPECTATION_ACTIONS,
  type TPipelineSpec,
  type TPipelineSpecInput,
  type TSpecSections,
  type TKafkaSource,
  type TEventTime,
  type TDedupe,
  type TExpectation,
  type TTransform,
  type TTrigger,
  type TResolvedOutput,
  type TSingleOutputSpec,
} from "./spec-schema";
export {
  ZJoin,
  ZDimension,
  JOIN_ON_MISSING,
  isPipelineDimension,
  dimensionName,
  type TJoin,
  type TDimension,
  type TChangelogDimension,
  type TPipelineDimension,
} from "./join-schema";
export { ZOutput, ZOutputs, MAX_OUTPUTS, outputNameProblem, type TOutputSection } from "./outputs-schema";
export { outputViews, joinFields, joinedContract, sinkTables, type TOutputView } from "./output-views";
export {
  ZAggregate,
  ZWindow,
  OUTPUT_MODES,
  type TAggregate,
  type TWindow,
  type TOutputMode,
} from "./aggregate-schema";
export { ZCdc, SCD2_COLUMNS, type TCdc } from "./cdc-schema";
export {
  ZSink,
  ZPostgresSink,
  ZWebhookSink,
  SINK_MODES,
  type TSinkMode,
  type TResolvedSink,
  type TResolvedPostgresSink,
  type TResolvedWebhookSink,
} from "./sink-schema";
export {
  ZMeasure,
  MEASURE_FUNCTIONS,
  parseMeasure,
  formatMeasure,
  type TMeasure,
  type TMeasureFunction,
} from "./measure";
export { ZDuration, ZPositiveDuration } from "./spec-primitives";

// Contract and output columns
export {
  ZContract,
  FIELD_TYPES,
  contractColumns,
  postgresTypeFor,
  fieldNameProblem,
  type TContract,
  type TContractInput,
  type TFieldType,
  type TFieldSpec,
  type TColumn,
} from "./contract";
export {
  outputColumns,
  aggregateResultKey,
  cdcResultKey,
  measureResultType,
  WINDOW_COLUMNS,
} from "./output-columns";
export { naturalKey } from "./resolve-sink";

// Identifiers and durations
export {
  IDENTIFIER_PATTERN,
  MAX_TABLE_NAME_LENGTH,
  InvalidIdentifierError,
  assertIdentifier,
  identifierProblem,
  tableNameProblem,
  quoteIdentifier,
  quoteQualifiedName,
  splitQualifiedName,
} from "./identifier";
export {
  parseDuration,
  formatDuration,
  canonicalDuration,
  durationProblem,
  InvalidDurationError,
} from "./duration";

export { DEFAULT_TARGETS, ZTargets, resolveTargets, type TTargets, type TResolvedTargets } from "./targets";

// Expressions
export {
  compileSpec,
  specTiming,
  DEFAULT_IDLE_TIMEOUT,
  type TCompiledSpec,
  type TCompiledExpectation,
  type TCompiledMeasure,
  type TSpecTiming,
} from "./compile-spec";
export type { TCompiledPredicate, TExpressionKind } from "./expressions";
export { toCelRow, celRowConverter, type TCelRow } from "./cel-row";
export { CEL_TYPES } from "./cel-environment";

// Canonical form, hash and diffs
export { canonicalizeSpec, canonicalJson, specHash } from "./canonical";
export { diffSpecs, type TSpecChange } from "./diff";
export {
  stateCompatibility,
  outputContinuations,
  outputPairs,
  type TStateCompatibility,
  type TStateFinding,
} from "./state-compatibility";
export { STATE_KINDS, type TStateKind } from "./state-checks";
export {
  classifyContractChange,
  type TContractChange,
  type TContractClassification,
} from "./contract-change";
export { specVocabulary, type TSpecKey, type TSpecVocabulary } from "./spec-vocabulary";
