// The SQL registration and sink-table migration run on, in its own file because registration,
// version compatibility and migration all take it and none should import another for a type.
import type pg from "pg";

/**
 * The SQL a registration needs: a pg client, or an adapter over another driver's transaction (the
 * console applies an approved schema change inside its Prisma transaction, @sluice/services
 * change-requests/prisma-sql-client.ts), so that approving, registering and moving the runs commit
 * together or not at all.
 *
 * Rows only, no affected-row count: through Prisma every statement runs as a query that returns rows
 * (an UPDATE without RETURNING returns none), so a count would have to be guessed. A statement whose
 * effect must be counted says RETURNING and counts its rows; the compiler refuses `rowCount` here.
 */
export interface SqlClient {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: R[] }>;
}
