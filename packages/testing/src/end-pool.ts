// Ending a pg.Pool before its database is dropped. pool.end() resolves once it has asked each client to
// end, not once their connections are closed (brianc/node-postgres#2328, open). A DROP DATABASE … WITH
// (FORCE) right after it then terminates connections still closing, and the pool re-emits the client's
// 57P01 "terminating connection due to administrator command" as an 'error' nobody listens to — an
// unhandled error that fails a test run that passed. This waits until every client has ended.
import type pg from "pg";

export async function endPool(pool: pg.Pool): Promise<void> {
  const open = pool.totalCount;
  let removed = 0;
  const closed = new Promise<void>((resolve) => {
    if (open === 0) resolve();
    pool.on("remove", () => {
      if (++removed === open) resolve();
    });
  });
  // A connection that fails while closing is of no consequence any more.
  pool.on("error", () => undefined);
  await pool.end();
  await closed;
}
