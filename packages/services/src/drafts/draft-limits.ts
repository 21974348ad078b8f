// The limits that keep a paste or a dry run from costing the server more than a batch would (shared
// with the browser, which says so before sending).

/** A spec is a few kilobytes; this is generous and still cheap to parse on every keystroke. */
export const MAX_DRAFT_CHARS = 100_000;
/** At most this many records per partition in a dry run's sample… */
export const MAX_SAMPLE_PER_PARTITION = 1_000;
/** …and this many in all. */
export const MAX_SAMPLE_RECORDS = 5_000;
/** How long a dry run may wait for Kafka to return its sample. */
export const DRY_RUN_READ_TIMEOUT_MS = 20_000;
/** How long a dry run may spend evaluating its sample before it is refused (its reading excluded). */
export const DRY_RUN_EVALUATE_TIMEOUT_MS = 15_000;
/**
 * Rows a dry run evaluates between two yields to the console's event loop: other requests (the
 * health check, other people's pages) are never held up by more than this many rows' expressions.
 */
export const DRY_RUN_YIELD_EVERY = 25;
