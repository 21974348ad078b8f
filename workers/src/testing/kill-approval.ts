// The crash tests' "kill -9 inside the approval": a separate process (approve-and-hang.ts) approves a
// change request and stops inside the approval's transaction, after applying it and before the
// commit; it is SIGKILLed there, and this returns once Postgres has ended its transaction (the
// request's row lock is free again) — so the caller can assert nothing of it was applied.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import type { TAuditWho } from "@sluice/services";
import { waitFor } from "@sluice/testing";

const HANG = path.join(path.dirname(fileURLToPath(import.meta.url)), "approve-and-hang.ts");

export async function approveAndKillBeforeCommit(opts: {
  databaseUrl: string;
  pool: pg.Pool;
  changeRequestId: string | bigint;
  pipeline: string;
  approver: TAuditWho;
}): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", HANG], {
    env: {
      ...process.env,
      DATABASE_URL: opts.databaseUrl,
      CR_ID: String(opts.changeRequestId),
      CR_PIPELINE: opts.pipeline,
      APPROVER_ID: opts.approver.actorUserId ?? "",
      APPROVER_EMAIL: opts.approver.actor,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => d.toString().includes("uncommitted") && resolve());
    child.on("exit", (code) =>
      reject(new Error(`approve-and-hang exited (${code}) before reaching the commit`)),
    );
  });
  child.kill("SIGKILL");
  await new Promise((r) => child.once("exit", r));
  await waitFor(
    "the killed transaction's locks to go",
    async () =>
      opts.pool
        .query(`SELECT status FROM change_requests WHERE id = $1 FOR UPDATE NOWAIT`, [
          String(opts.changeRequestId),
        ])
        .then(
          () => true,
          () => false,
        ),
    30_000,
    200,
  );
}
