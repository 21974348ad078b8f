// The join section: an event-time temporal join of each row with a dimension kept by CDC — a changelog
// topic the pipeline reads next to its source. Each row gets the dimension version valid at its own
// event time; a row whose dimension has not caught up waits (`waitFor`), and beyond that bound it is
// emitted with the dimension missing or dead-lettered (`onMissing`). Semantics: docs/engine.md, "Joins".
import { z } from "zod";
import { ZContract } from "./contract";
import { ZEventTime, ZKafkaSource } from "./source-schema";
import { ZColumnList, ZColumnRef, ZDuration, ZExpression } from "./spec-primitives";

export const ZDimension = z.strictObject({
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
export type TJoin = z.output<typeof ZJoin>;
