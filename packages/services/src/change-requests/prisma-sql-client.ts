// The engine's registration (registerPipelineVersionIn) speaks pg's `query(text, values)`; an
// approved schema change must run it inside the approval's Prisma transaction, so that approving,
// registering the version, migrating the sink table and moving the runs commit together or not at all
// (a crash in between leaves the request pending, never a half-applied change). Prisma's raw calls
// on that transaction are the same connection. Every statement goes through $queryRawUnsafe, which on
// the pg driver adapter runs DDL and DML alike and returns the rows (none without RETURNING): the
// engine's SqlClient asks for rows only, so nothing here has to guess what a statement is. Values stay
// parameters; objects are passed as JSON text (the engine casts them, e.g. `$4::jsonb`).
import type { Prisma } from "@sluice/db";
import type { SqlClient } from "@sluice/engine";

export function prismaSqlClient(tx: Prisma.TransactionClient): SqlClient {
  return {
    async query<R>(text: string, values: unknown[] = []) {
      const params = values.map((v) =>
        v !== null && typeof v === "object" && !(v instanceof Date) ? JSON.stringify(v) : v,
      );
      return { rows: await tx.$queryRawUnsafe<R[]>(text, ...params) };
    },
  } as SqlClient;
}
