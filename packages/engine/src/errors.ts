// Errors the batch loop distinguishes. Retriable errors (a broker or database hiccup) are retried by
// whoever schedules batches; permanent ones stop the pipeline with a message a person can act on.

export class EngineError extends Error {
  readonly retriable: boolean;
  constructor(message: string, opts: { retriable: boolean; cause?: unknown }) {
    super(message, { cause: opts.cause });
    this.name = new.target.name;
    this.retriable = opts.retriable;
  }
}

/** Another runner took over this pipeline version; this one must stop without committing. */
export class FencedError extends EngineError {
  constructor(message: string) {
    super(message, { retriable: false });
  }
}

/**
 * A newer version took this one's place (it continued this version's checkpoint, or rebuilds its
 * table): this version can never take the lease again. Its runs should stop.
 */
export class SupersededError extends FencedError {}

/** A `fail` expectation was violated: the batch was not committed and the pipeline stops. */
export class ExpectationFailedError extends EngineError {
  constructor(
    message: string,
    readonly rule: string,
    readonly rowCount: number,
  ) {
    super(message, { retriable: false });
  }
}

/** The spec or the sink table cannot work as declared; fix the spec or the table. */
export class ConfigurationError extends EngineError {
  constructor(message: string) {
    super(message, { retriable: false });
  }
}

/** A transient failure (Kafka read timed out, connection lost): the same batch can simply re-run. */
export class RetriableError extends EngineError {
  constructor(message: string, cause?: unknown) {
    super(message, { retriable: true, cause });
  }
}

/**
 * A partition group's batch met dedup keys another group committed after this batch looked them up
 * (the same event on two partitions): it rolled back and runs again against them (pipeline-runner.ts).
 */
export class CrossGroupDuplicateError extends RetriableError {}

/**
 * A partition group's batch accepted rows that are late by the watermark another group committed
 * since this batch was processed (their windows may be final, their dedup keys evicted): it rolled
 * back and runs again, those rows now late (commit-batch.ts).
 */
export class CrossGroupLateError extends RetriableError {}

/** The engine's own bookkeeping is inconsistent (e.g. outcomes do not add up): never commit. */
export class InvariantError extends EngineError {
  constructor(message: string) {
    super(message, { retriable: false });
  }
}

// SQLSTATE classes that a retry can get past: connection exception, transaction rollback
// (serialization failure, deadlock), object not in prerequisite state (lock not available),
// insufficient resources, operator intervention (admin shutdown, query canceled), system error.
const TRANSIENT_SQLSTATE_CLASSES = new Set(["08", "40", "53", "55", "57", "58"]);

/**
 * Whether a failed batch is worth retrying. Engine errors say so themselves and kafkajs errors carry
 * `retriable`; a Postgres error is judged by its SQLSTATE class — the rest (data exceptions, constraint
 * violations, missing tables or privileges, ...) fail the same way on every retry, so they stop the
 * pipeline at once with their message instead of after a round of backoffs. Anything else (a socket
 * closed, a timeout) is retried.
 */
export function isRetriable(err: unknown): boolean {
  if (err instanceof EngineError) return err.retriable;
  if (typeof err !== "object" || err === null) return true;
  const e = err as { retriable?: unknown; code?: unknown; severity?: unknown };
  if (typeof e.retriable === "boolean") return e.retriable;
  if (typeof e.code === "string" && typeof e.severity === "string" && /^[0-9A-Z]{5}$/.test(e.code))
    return TRANSIENT_SQLSTATE_CLASSES.has(e.code.slice(0, 2));
  return true;
}
