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

// Second workaround: @prisma/adapter-pg's executeScript (how `migrate deploy` applies a migration
// file) splits the script on every ";" — inside comments, strings and PL/pgSQL bodies too — so a
// migration with a trigger function fails. Postgres runs a multi-statement script itself (simple
// query protocol), so the whole file is sent as one query. Remove with the class above once the
// adapter splits statements properly (the native schema engine never had this problem).
class WholeScriptPrismaPg extends PrismaPg {
  override async connect(): ReturnType<PrismaPg["connect"]> {
    const adapter = await super.connect();
    const driver = adapter.underlyingDriver() as pg.Pool;
    adapter.executeScript = async (script: string) => {
      await driver.query(script);
    };
    return adapter;
  }
}

export async function createMigrationAdapter(): Promise<PrismaPg> {
  const connectionString = process.env.DATABASE_URL;
  if (!connectionString) {
    throw new Error("DATABASE_URL is not set. Run `bash scripts/services.sh start` or export it.");
  }
  const pool = new pg.Pool({ connectionString, Client: NameAsTextClient });
  return new WholeScriptPrismaPg(pool);
}
