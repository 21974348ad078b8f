// The driver adapter Prisma's CLI uses for `migrate deploy` / `migrate diff` with the JS engine.
//
// Workaround for prisma/prisma#27403 ("Prisma Migrate fails when using @prisma/adapter-pg through
// prisma.config.ts"): the schema engine introspects catalog columns of Postgres' `name` type
// (oid 19, and its array oid 1003), which the adapter cannot map. We report them as text / text[],
// which is what `name` is. Remove this file's Client subclass once that issue is fixed upstream.
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";

const NAME_OID = 19;
const NAME_ARRAY_OID = 1003;
const TEXT_OID = 25;
const TEXT_ARRAY_OID = 1009;

type FieldList = { dataTypeID: number }[];

function reportNameAsText(result: unknown): void {
  const results = Array.isArray(result) ? result : [result];
  for (const r of results) {
    const fields = (r as { fields?: FieldList } | undefined)?.fields ?? [];
    for (const field of fields) {
      if (field.dataTypeID === NAME_OID) field.dataTypeID = TEXT_OID;
      if (field.dataTypeID === NAME_ARRAY_OID) field.dataTypeID = TEXT_ARRAY_OID;
    }
  }
}

class NameAsTextClient extends pg.Client {
  // pg's query() has many overloads: the adapter awaits a promise, pg.Pool#query passes a callback.
  override query(...args: unknown[]): never {
    const last = args[args.length - 1];
    if (typeof last === "function") {
      args[args.length - 1] = (err: unknown, result: unknown) => {
        if (!err) reportNameAsText(result);
        (last as (e: unknown, r: unknown) => void)(err, result);
      };
    }
    const out = (super.query as (...a: unknown[]) => unknown)(...args);
    if (out instanceof Promise) {
      return out.then((result) => {
        reportNameAsText(result);
        return result;
      }) as never;
    }
    return out as never;
  }
}

export async function createMigrationAdapter(): Promise<PrismaPg> {
  const connectionString = process.env.DATABASE_URL;
  if (!connectionString) {
    throw new Error("DATABASE_URL is not set. Run `bash scripts/services.sh start` or export it.");
  }
  const pool = new pg.Pool({ connectionString, Client: NameAsTextClient });
  return new PrismaPg(pool);
}
