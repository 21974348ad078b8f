// The engine's registration (registerPipelineVersionIn) speaks pg's `query(text, values)`; an
// approved schema change must run it inside the approval's Prisma transaction, so that approving,
// registering the version, migrating the sink table and moving the runs commit together or not at all
// (a crash in between leaves the request pending, never a half-applied change). Prisma's raw calls
// on that transaction are the same connection: statements that return rows go through
// $queryRawUnsafe, the others through $executeRawUnsafe (its count is pg's rowCount). Values stay
// parameters; objects are passed as JSON text (the engine casts them, e.g. `$4::jsonb`).
import type { Prisma } from "@sluice/db";
import type { SqlClient } from "@sluice/engine";

const RETURNS_ROWS = /^\s*(SELECT|WITH|VALUES)\b|\bRETURNING\b/i;

export function prismaSqlClient(tx: Prisma.TransactionClient): SqlClient {
  return {
    async query<R>(text: string, values: unknown[] = []) {
      const params = values.map((v) =>
        v !== null && typeof v === "object" && !(v instanceof Date) ? JSON.stringify(v) : v,
      );
      if (RETURNS_ROWS.test(text)) {
        const rows = await tx.$queryRawUnsafe<R[]>(text, ...params);
        return { rows, rowCount: rows.length };
      }
      const rowCount = await tx.$executeRawUnsafe(text, ...params);
      return { rows: [] as R[], rowCount };
    },
  } as SqlClient;
}
