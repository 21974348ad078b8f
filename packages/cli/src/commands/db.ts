// `sluice db migrate`: create the database of DATABASE_URL if it does not exist and apply the
// migrations (Prisma's migrate deploy, as npm run db:migrate does). `sluice db status`: whether the
// database is ready for this version of Sluice. So a user of the CLI alone needs nothing else.
import {
  applyMigrations,
  createDatabaseIfMissing,
  databaseState,
  describeDatabaseUrl,
  migrationNames,
} from "@sluice/db";
import { childEnv, loadEnv, ZServiceEnv } from "@sluice/config";
import { CliError } from "../cli-error";
import { notReady, requireDatabase } from "../database-ready";

export async function dbCommand(action: string): Promise<number> {
  const url = loadEnv(ZServiceEnv).DATABASE_URL;
  const { server, database } = describeDatabaseUrl(url);
  const label = `database "${database}" on ${server}`;
  if (action === "status") {
    const { applied } = await requireDatabase(url);
    console.log(`${label}: ready, ${applied.length} migrations applied (all of this version's)`);
    return 0;
  }
  if (action !== "migrate")
    throw new CliError(`unknown action "db ${action}": use sluice db migrate or sluice db status`, 1);

  const before = await databaseState(url);
  if (before.kind === "unreachable" || before.kind === "refused") throw notReady(before, url)!;
  if (before.kind === "ready") {
    console.log(`${label}: up to date (${before.applied.length} migrations applied)`);
    return 0;
  }
  if (await createDatabaseIfMissing(url)) console.log(`${label}: created`);
  const pending = before.kind === "behind" ? before.pending.length : (await migrationNames()).length;
  console.log(`${label}: applying ${pending} migration(s) with prisma migrate deploy (its output on stderr)`);
  const { code } = await applyMigrations(childEnv({ DATABASE_URL: url }), { echo: true });
  if (code !== 0)
    throw new CliError(`${label}: prisma migrate deploy failed (exit ${code}); its output is above`, 1);
  const { applied } = await requireDatabase(url);
  console.log(`${label}: ready (${applied.length} migrations applied)`);
  return 0;
}
