// The SQL registration and sink-table migration run on, in its own file because registration,
// version compatibility and migration all take it and none should import another for a type.
import type pg from "pg";

/**
 * The SQL a registration needs: a pg client, or an adapter over another driver's transaction (the
 * console applies an approved schema change inside its Prisma transaction, @sluice/services
 * change-requests/prisma-sql-client.ts), so that approving, registering and moving the runs commit
 * together or not at all.
 */
export interface SqlClient {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>;
}
