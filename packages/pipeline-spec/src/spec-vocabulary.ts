// The spec's field names by section, read from the zod schema itself (so completions never drift from
// what validation accepts), with a line of documentation per field for the console editor's hover.
// The docs are the schema's comments in short (docs/pipeline-spec.md is the full reference).
import { ZPipelineSpecShape } from "./spec-schema";

export interface TSpecKey {
  key: string;
  doc: string;
}

/** Section path ("" for the top level, "source.kafka", "expectations[]") → the keys it accepts. */
export type TSpecVocabulary = Record<string, TSpecKey[]>;

const DOCS: Record<string, string> = {
  name: "The pipeline's name: lower-case letters, digits and -; unique; versions of a pipeline share it.",
  owner: "The slug of the team that owns the pipeline (its owners may change it).",
  description: "One sentence on what the pipeline produces, shown in the console.",
  source: "Where rows come from: source.kafka.",
  "source.kafka":
    "A Kafka topic read in micro-batches; offsets live in Sluice's checkpoint, never committed to Kafka.",
  "source.kafka.topic": "The topic to read.",
  "source.kafka.startingOffsets":
    "earliest (default) or latest: where a version that has read nothing yet starts.",
  "source.kafka.maxOffsetsPerTrigger":
    "Upper bound on offsets read per micro-batch, spread over partitions (default 10000).",
  "source.kafka.partitions": "Read only these partitions (default: all).",
  "source.kafka.parallelism":
    "Partition groups (default 1): partition p is read and committed by group p mod N, each its own chain of batches on the workers (or sluice run --group).",
  format: "How records are encoded: json.",
  contract: "The fields a record must have, their types, and what happens to rows that break it.",
  "contract.fields":
    "field: type (string, int, long, double, decimal, boolean, timestamp, date, json); a trailing ? makes it optional.",
  "contract.onUnknownField":
    "rescue (into _rescued), quarantine or reject a row with fields the contract does not list.",
  "contract.onTypeMismatch": "quarantine or reject a row whose field has the wrong type.",
  eventTime: "Event time, never processing time: the column and how far the watermark trails it.",
  "eventTime.column": "A required timestamp field of the contract.",
  "eventTime.watermarkDelay": "watermark = max(event time seen) − watermarkDelay, e.g. 10m.",
  "eventTime.idleTimeout":
    "A partition without new records for this long stops holding the watermark back (default 1m).",
  dedupe: "Drop rows whose key was seen before (within the watermark or a duration).",
  "dedupe.key": "Contract fields that identify a row, e.g. [event_id].",
  "dedupe.within": "watermark, or a duration such as 24h: how long keys are remembered.",
  expectations:
    "Checks on every row: { name, expr (CEL over the contract's fields), action: warn | drop | fail }.",
  "expectations[].name": "A name for the expectation, unique in the spec (shown in counts and dead letters).",
  "expectations[].expr": "A CEL expression over the contract's fields that must be true, e.g. amount > 0.",
  "expectations[].action":
    "warn (count, keep the row), drop (count, drop the row) or fail (stop the batch, commit nothing).",
  transform: "Row filter and column selection after expectations.",
  "transform.filter": "A CEL expression: rows for which it is false are counted as filtered.",
  "transform.select": "The contract fields the sink receives (default: all).",
  aggregate: "Event-time windows or keyed running aggregates instead of a row ledger.",
  "aggregate.window": "tumbling: 5m, or sliding: { size, slide }.",
  "aggregate.window.tumbling": "The window length, e.g. 5m; windows align to the epoch.",
  "aggregate.window.sliding": "{ size, slide }: overlapping windows.",
  "aggregate.window.sliding.size": "The window length.",
  "aggregate.window.sliding.slide": "How far each window starts after the previous one.",
  "aggregate.groupBy": "Contract fields the aggregate is grouped by.",
  "aggregate.measures":
    "name: function, e.g. sum(amount), count(), count_distinct(customer_id), max(amount) if type == 'refund'.",
  "aggregate.outputMode": "append (final windows once), update (changed windows every batch) or complete.",
  "aggregate.allowedLateness": "How long after the watermark passes a window it still accepts late rows.",
  cdc: "Apply changes (upserts and deletes) to a table by key, in sequence order.",
  "cdc.key": "Contract fields that identify the entity.",
  "cdc.sequenceBy": "A field that orders an entity's changes; an older change never overwrites a newer one.",
  "cdc.operation": "{ column, deleteWhen }: which rows are deletes.",
  "cdc.operation.column": "The field that holds the operation (e.g. op).",
  "cdc.operation.deleteWhen": "A CEL expression: true for a delete, e.g. op == 'D'.",
  "cdc.deleteWhen": "A CEL expression: true for a delete.",
  "cdc.scdType": "1 (keep the current row) or 2 (keep history with valid_from / valid_to / is_current).",
  "cdc.stateEviction": "watermark: forget applied sequences once the watermark passes them.",
  lateData:
    "What happens to rows behind the watermark (minus allowedLateness): deadLetter or drop (counted).",
  sink: "Where results go: postgres (a table) or webhook.",
  "sink.postgres": "A Postgres table Sluice creates and writes in the batch's transaction.",
  "sink.postgres.table": "The table name (schema.table allowed).",
  "sink.postgres.mode": "append or upsert (by key).",
  "sink.postgres.key": "The table's key columns (default: the dedupe key or the aggregate's groups).",
  "sink.webhook": "An HTTP endpoint called once per row's idempotency key.",
  "sink.webhook.url": "The endpoint (no credentials in it: use headersFromEnv or urlFromEnv).",
  "sink.webhook.urlFromEnv": "The environment variable holding the URL.",
  "sink.webhook.method": "POST (default) or PUT.",
  "sink.webhook.headers": "Fixed headers without secrets.",
  "sink.webhook.headersFromEnv": "Header: ENV_VAR — secret headers read from the worker's environment.",
  "sink.webhook.idempotencyKey":
    "Fields that identify a delivery; never sent twice after a recorded success.",
  "sink.webhook.idempotencyHeader": "The header carrying the idempotency key (default Idempotency-Key).",
  "sink.webhook.timeout": "How long one request may take, e.g. 5s.",
  "sink.webhook.maxAttempts": "Attempts before a row becomes a dead letter.",
  join: "Enrich each row with a dimension entity's version valid at the row's event time (a changelog topic or another pipeline's SCD2 history).",
  "join.dimension":
    "The dimension's changelog (kafka, contract, key, eventTime, sequenceBy, deleteWhen), or another pipeline (pipeline, contract, key).",
  "join.dimension.pipeline":
    "Another pipeline of the same team whose result is SCD2 history, sequenced by its event time, e.g. customer-status.",
  "join.dimension.kafka": "The changelog topic, read next to the source in every batch.",
  "join.dimension.kafka.topic": "The dimension's changelog topic (not the source's).",
  "join.dimension.kafka.startingOffsets": "earliest (default) or latest: where the changelog is first read.",
  "join.dimension.kafka.maxOffsetsPerTrigger":
    "Upper bound on changelog offsets read per batch (default 10000).",
  "join.dimension.kafka.partitions": "Read only these partitions of the changelog (default: all).",
  "join.dimension.contract": "The changes' fields and types; a change that breaks it is a dead letter.",
  "join.dimension.contract.fields": "field: type, as in contract.fields.",
  "join.dimension.contract.onUnknownField":
    "rescue (ignore), quarantine or reject a change with unknown fields.",
  "join.dimension.contract.onTypeMismatch": "quarantine or reject a change whose field has the wrong type.",
  "join.dimension.key": "The dimension fields that identify the entity, e.g. [customer_id].",
  "join.dimension.eventTime": "When each change happened, and how far the dimension's watermark trails it.",
  "join.dimension.eventTime.column": "A required timestamp field: a version is valid from it.",
  "join.dimension.eventTime.watermarkDelay":
    "The dimension's watermark = its max event time − this, e.g. 10m.",
  "join.dimension.eventTime.idleTimeout":
    "A changelog partition quiet this long stops holding the dimension's watermark back.",
  "join.dimension.sequenceBy": "Orders two changes of a key with the same event time (the higher wins).",
  "join.dimension.deleteWhen": "A CEL expression over the change: true for a delete, e.g. op == 'D'.",
  "join.on": "Row field: dimension key field, e.g. { customer_id: customer_id }.",
  "join.fields": "New field: dimension field, e.g. { customer_status: status } (null when missing).",
  "join.waitFor":
    "How far the source's event time may pass a row while it waits for the dimension, e.g. 15m.",
  "join.onMissing": "deadLetter (dimension_missing, replayable) or emit (joined fields null, counted).",
  outputs:
    "Several results from one read: name → { sink, aggregate | cdc, transform, expectations, watermarkDelay }.",
  trigger: "When batches run: every: 2s, or availableNow: true (drain, then stop).",
  "trigger.every": "The interval between batches, e.g. 2s.",
  "trigger.availableNow": "true: read what is there, then stop.",
  targets: "Freshness and violation-rate targets for the console's signals.",
  "targets.freshness": "How old the newest committed event may be, e.g. 5m.",
  "targets.violationRate": "The share of rows that may violate expectations, e.g. 0.01.",
};

type TDef = {
  type: string;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  in?: unknown;
  options?: unknown[];
  element?: unknown;
};
const defOf = (schema: unknown): TDef | undefined => (schema as { _zod?: { def: TDef } })?._zod?.def;

function walk(schema: unknown, path: string, out: TSpecVocabulary, depth: number): void {
  const def = defOf(schema);
  if (!def || depth > 10) return;
  switch (def.type) {
    case "object": {
      const known = new Set((out[path] ??= []).map((k) => k.key));
      for (const [key, child] of Object.entries(def.shape ?? {})) {
        const full = path ? `${path}.${key}` : key;
        if (!known.has(key)) out[path]!.push({ key, doc: DOCS[full] ?? DOCS[full.replace("[]", "")] ?? "" });
        walk(child, full, out, depth + 1);
      }
      return;
    }
    case "optional":
    case "default":
    case "nullable":
    case "readonly":
    case "prefault":
    case "catch":
      return walk(def.innerType, path, out, depth + 1);
    case "pipe":
      return walk(def.in, path, out, depth + 1);
    case "union":
      for (const option of def.options ?? []) walk(option, path, out, depth + 1);
      return;
    case "array":
      return walk(def.element, `${path}[]`, out, depth + 1);
  }
}

let cached: TSpecVocabulary | undefined;

/** Every section's keys with their docs. */
export function specVocabulary(): TSpecVocabulary {
  if (!cached) walk(ZPipelineSpecShape, "", (cached = {}), 0);
  return cached;
}
