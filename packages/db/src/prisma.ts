// The control-plane Prisma client. It runs on Prisma's JS engine through @prisma/adapter-pg, so no
// native query engine binary is needed (see docs/database.md).
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@prisma/client";

export type { Prisma } from "@prisma/client";
export { PrismaClient };

export function createPrismaClient(databaseUrl: string): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
}
