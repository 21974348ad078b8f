// Fixed-shape SQL on the control plane's tables, typed from the Prisma schema: Kysely builds and
// compiles the statement against the table types `prisma generate` writes (generated/kysely-tables.ts,
// the prisma-kysely generator in prisma/schema.prisma), and Prisma runs it, so it joins whatever Prisma
// transaction the caller is in (approvals apply inside one). Kysely never connects here: it is the
// query builder only, on its DummyDriver, as in its recipe "Splitting query building and execution".
//
// Whether a statement's rows or its affected-row count come back is the caller's choice, and the types
// check it: `rowsOf` takes a SELECT or a statement with RETURNING, `countOf` an INSERT, UPDATE or DELETE
// without one. Nothing looks at the SQL text to guess.
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
  type DeleteResult,
  type InsertResult,
  type UpdateResult,
} from "kysely";
import type { DB } from "./generated/kysely-tables";
import type { Prisma } from "./prisma";

export { expressionBuilder, sql, type Expression, type NotNull, type Selectable, type SqlBool } from "kysely";
export type { DB as TControlPlaneTables } from "./generated/kysely-tables";

/** The query builder over Sluice's tables: `tables.selectFrom("change_requests")…`. */
export const tables = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** A Prisma client or interactive transaction: the statement runs on its connection. */
export type TSqlRunner = Pick<Prisma.TransactionClient, "$queryRawUnsafe" | "$executeRawUnsafe">;

type TCounted = InsertResult | UpdateResult | DeleteResult;
/** The row type a compiled statement yields. */
export type TRowOf<Q> = Q extends Compilable<infer O> ? O : never;
// An INSERT / UPDATE / DELETE without RETURNING yields Kysely's result object, not rows: such a statement
// given to rowsOf becomes `never`, so it does not compile. The tuple stops the check distributing.
type ReturnsRows<Q> = [TRowOf<Q>] extends [TCounted] ? never : unknown;
type CountsRows<Q> = [TRowOf<Q>] extends [TCounted] ? unknown : never;

/** The rows of a SELECT, or of an INSERT / UPDATE / DELETE with RETURNING. */
export async function rowsOf<Q extends Compilable<unknown>>(
  db: TSqlRunner,
  query: Q & ReturnsRows<Q>,
): Promise<TRowOf<Q>[]> {
  const { sql: text, parameters } = query.compile();
  return db.$queryRawUnsafe<TRowOf<Q>[]>(text, ...parameters.map(asParameter));
}

/** The first row, or undefined. */
export async function firstRowOf<Q extends Compilable<unknown>>(
  db: TSqlRunner,
  query: Q & ReturnsRows<Q>,
): Promise<TRowOf<Q> | undefined> {
  return (await rowsOf(db, query))[0];
}

/** How many rows an INSERT, UPDATE or DELETE without RETURNING touched. */
export async function countOf<Q extends Compilable<unknown>>(
  db: TSqlRunner,
  query: Q & CountsRows<Q>,
): Promise<number> {
  const { sql: text, parameters } = query.compile();
  return db.$executeRawUnsafe(text, ...parameters.map(asParameter));
}

// jsonb values go over the wire as JSON text (Prisma would otherwise refuse a plain object); arrays stay
// Postgres arrays, Dates stay timestamps.
function asParameter(v: unknown): unknown {
  return v !== null && typeof v === "object" && !(v instanceof Date) && !Array.isArray(v)
    ? JSON.stringify(v)
    : v;
}
