// The join section: an event-time temporal join of each row with a dimension kept by CDC — a changelog
// topic the pipeline reads next to its source, or the SCD2 history table of another Sluice pipeline
// (`dimension: { pipeline }`, checked against that pipeline when this one is registered). Each row gets the dimension version valid at its own
// event time; a row whose dimension has not caught up waits (`waitFor`), and beyond that bound it is
// emitted with the dimension missing or dead-lettered (`onMissing`). Semantics: docs/engine.md, "Joins".
import { z } from "zod";
import { ZContract } from "./contract";
import { ZEventTime, ZKafkaSource } from "./source-schema";
import { ZColumnList, ZColumnRef, ZDuration, ZExpression, ZSlug } from "./spec-primitives";

export const ZChangelogDimension = z.strictObject({
  /** The changelog topic: one message per change of a dimension entity. */
  kafka: ZKafkaSource,
  /** The changes' shape; a change that does not fit is a dead letter of this pipeline (topic = the dimension's). */
  contract: ZContract,
  /** The entity a change is about (e.g. customer_id). */
  key: ZColumnList,
  /** When the change happened: a version is valid from its event time until the next version's. */
  eventTime: ZEventTime,
  /** Orders two changes of a key with the same event time (the higher wins); a repeat of a version changes nothing. */
  sequenceBy: ZColumnRef.optional(),
  /** CEL over the change: true when the entity is deleted from then on (a row after it finds no version). */
  deleteWhen: ZExpression.optional(),
});

/**
 * Another registered pipeline whose result is CDC history (cdc.scdType 2, sequenceBy its event time):
 * its committed rows are the versions (valid_from / valid_to), its committed watermark the dimension's.
 * The fields read are declared here, so this spec stays checkable on its own; registration checks them
 * against that pipeline's table.
 */
export const ZPipelineDimension = z.strictObject({
  /** The dimension's pipeline (its name); owned by the same team. */
  pipeline: ZSlug,
  /** Its table's columns this join reads, with their types (its cdc key and the enriched fields). */
  contract: ZContract,
  /** Its cdc.key. */
  key: ZColumnList,
});

export const ZDimension = z.union([ZChangelogDimension, ZPipelineDimension]);

export const JOIN_ON_MISSING = ["deadLetter", "emit"] as const;

export const ZJoin = z.strictObject({
  dimension: ZDimension,
  /** Row field → dimension key field, for every field of dimension.key. */
  on: z.record(ZColumnRef, ZColumnRef).refine((on) => Object.keys(on).length > 0, {
    error: "map at least one field, e.g. on: { customer_id: customer_id }",
  }),
  /** New row field → dimension field: the dimension values each row is enriched with (null when missing). */
  fields: z.record(ZColumnRef, ZColumnRef).refine((f) => Object.keys(f).length > 0, {
    error: "add at least one field, e.g. fields: { customer_status: status }",
  }),
  /**
   * How far the row's source may move past a row's event time (its event time, not the clock) while the
   * row waits for the dimension's watermark to pass it. 0: never wait.
   */
  waitFor: ZDuration,
  /** A row with no dimension version at its time: a dead letter `dimension_missing` (replayable), or emitted with the fields null (counted). */
  onMissing: z.enum(JOIN_ON_MISSING).default("deadLetter"),
});

export type TDimension = z.output<typeof ZDimension>;
export type TChangelogDimension = z.output<typeof ZChangelogDimension>;
export type TPipelineDimension = z.output<typeof ZPipelineDimension>;

export const isPipelineDimension = (dim: TDimension): dim is TPipelineDimension => "pipeline" in dim;

/** How the dimension is named to people (dead letters, the graph): its topic, or `pipeline <name>`. */
export const dimensionName = (dim: TDimension) =>
  isPipelineDimension(dim) ? `pipeline ${dim.pipeline}` : dim.kafka.topic;
export type TJoin = z.output<typeof ZJoin>;
