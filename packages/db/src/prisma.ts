// The control-plane Prisma client. It runs on Prisma's JS engine through @prisma/adapter-pg, so no
// native query engine binary is needed (see docs/database.md).
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@prisma/client";
import type pg from "pg";

// A value, not only types: Prisma.sql / Prisma.join compose parameterized SQL fragments.
export { Prisma } from "@prisma/client";
export { PrismaClient };

/**
 * A client on its own connection pool (from a URL), or on an existing pg pool — a process that also
 * runs the engine shares one pool between both, so it holds fewer Postgres connections. `$disconnect`
 * never ends a pool it was given.
 */
export function createPrismaClient(databaseUrlOrPool: string | pg.Pool): PrismaClient {
  const adapter =
    typeof databaseUrlOrPool === "string"
      ? new PrismaPg({ connectionString: databaseUrlOrPool })
      : new PrismaPg(databaseUrlOrPool);
  return new PrismaClient({ adapter });
}
