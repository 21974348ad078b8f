// Sink rows are written as a database role of their own (issue 19 item 5): `sluice_sink_writer` may
// read and write the tables of the sinks schema and nothing else — no control-plane table (users,
// sessions, audit_events, …) and none of the engine's own (checkpoints, offsets, state). Every
// statement that writes a sink table (store/write-sink.ts, store/write-result.ts) runs between
// `SET LOCAL ROLE sluice_sink_writer` and `RESET ROLE` inside the batch's transaction, so a wrong
// table name reaching one of them is refused by Postgres ("permission denied"), whatever the engine
// believed. The rest of the commit (checkpoint, offsets, state, dead letters) runs as the app's user.
// The role is created and granted by a migration (…_sink_writer_role); docs/security.md says what a
// DBA runs when the app's user may not create roles.
import type pg from "pg";
import type { SqlClient } from "./sql-client";

/** The role sink writes run as (a cluster-wide name: every Sluice database in the cluster shares it). */
export const SINK_WRITER_ROLE = "sluice_sink_writer";

/** Runs `write` as the sink writer inside the caller's open transaction, then returns to the app's role. */
export async function asSinkWriter<T>(client: pg.PoolClient, write: () => Promise<T>): Promise<T> {
  await client.query(`SET LOCAL ROLE ${SINK_WRITER_ROLE}`);
  let result: T;
  try {
    result = await write();
  } catch (err) {
    // The transaction is aborted (the statement failed) or the caller will roll back: SET LOCAL ends
    // with it. Resetting here could only fail and hide the real error.
    await client.query("RESET ROLE").catch(() => undefined);
    throw err;
  }
  await client.query("RESET ROLE");
  return result;
}

/**
 * Lets the writer write a physical table its creator has just made. The migration's default privileges
 * already cover tables made by the user that ran the migrations (the usual case: nothing to do); this
 * covers an app's user that is another. Granting unconditionally would rewrite the table's ACL on every
 * call, and concurrent GRANTs on one table fail in Postgres with "tuple concurrently updated".
 */
export async function grantSinkWriter(db: SqlClient, tableSql: string): Promise<void> {
  const mayWrite = async () =>
    (
      await db.query<{ ok: boolean }>(
        // Each separately: has_table_privilege with a list is true when any one of them is held.
        `SELECT bool_and(has_table_privilege($1, $2::regclass, p)) AS ok
           FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE']) p`,
        [SINK_WRITER_ROLE, tableSql],
      )
    ).rows[0]?.ok === true;
  if (await mayWrite()) return;
  try {
    await db.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${tableSql} TO ${SINK_WRITER_ROLE}`);
  } catch (err) {
    // Another runner granted the same table at the same moment (XX000 "tuple concurrently updated"):
    // fine if its grant is now in place.
    if (!(await mayWrite())) throw err;
  }
}
