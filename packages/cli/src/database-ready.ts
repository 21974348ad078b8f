// Before a command touches the database: is it there, with every migration of this checkout? If not,
// say what is wrong and the command that fixes it, instead of `relation "teams" does not exist`.
import { databaseState, explainDatabaseState, type TDatabaseState } from "@sluice/db";
import { CliError } from "./cli-error";

/** The error to exit with (2 when Postgres is unreachable, else 1), or undefined when the database is ready. */
export function notReady(state: TDatabaseState, url: string): CliError | undefined {
  const problem = explainDatabaseState(state, url);
  return problem ? new CliError(problem, state.kind === "unreachable" ? 2 : 1) : undefined;
}

/** The database's state if it is ready; otherwise throws the CliError that says what to do. */
export async function requireDatabase(url: string): Promise<Extract<TDatabaseState, { kind: "ready" }>> {
  const state = await databaseState(url);
  if (state.kind === "ready") return state;
  throw notReady(state, url)!;
}
