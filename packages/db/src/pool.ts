// The pg pool every long-running Sluice process uses (the CLI's `run`, the workers). pg emits 'error'
// on a client whose connection drops — Postgres restarting sends "terminating connection due to
// administrator command" and closes the socket — and an 'error' event without a listener kills the
// process. pg-pool listens only while a client is idle in the pool; a client checked out (inside a
// transaction, between two of its queries) has no listener. So every client gets one for its whole
// life: the error then surfaces where it belongs — the query in flight, or the next one, rejects — and
// the caller retries; pg-pool drops the broken client when it is released.
import pg from "pg";

export interface PoolOptions {
  connectionString: string;
  max: number;
  /** A connection failed outside any query (idle, or between a checked-out client's queries). */
  onConnectionError(err: Error): void;
}

export function createPool(opts: PoolOptions): pg.Pool {
  const pool = new pg.Pool({ connectionString: opts.connectionString, max: opts.max });
  pool.on("connect", (client) => client.on("error", (err) => opts.onConnectionError(err)));
  // pg-pool re-emits an idle client's error on the pool; the client's own listener above reported it.
  pool.on("error", () => undefined);
  return pool;
}
