export { createPrismaClient, PrismaClient } from "./prisma";
export { Prisma } from "./prisma";
export * from "@prisma/client";
export {
  applyMigrations,
  createDatabaseIfMissing,
  databaseState,
  describeDatabaseUrl,
  explainDatabaseState,
  migrationNames,
  MIGRATE_COMMAND,
  MIGRATIONS_DIR,
  type TDatabaseState,
} from "./migrations";
export { createPool, type PoolOptions } from "./pool";
export {
  countOf,
  expressionBuilder,
  firstRowOf,
  rowsOf,
  sql,
  tables,
  type Expression,
  type NotNull,
  type Selectable,
  type SqlBool,
  type TControlPlaneTables,
  type TRowOf,
  type TSqlRunner,
} from "./typed-sql";
