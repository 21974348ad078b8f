// The end of the keeping time (docs/rollouts.md): a promotion stops blue and a rollback stops green,
// and the stopped side keeps its state and tables so the step can be undone — for the rollout's
// keepPreviousHours after the decision (chosen at start, a week by default). Once that has passed the
// workers retire it (engine retireVersion: superseded, fenced, state deleted, the tables no live
// version writes dropped), mark the rollout's previous_dropped_at — after which a rollback is refused
// — and audit it, each rollout in a transaction of its own. A side that serves again meanwhile (it
// cannot: only a promoted rollout is rolled back, and a retired candidate never runs) is left alone.
import { countOf, firstRowOf, rowsOf, sql, tables, type Prisma, type PrismaClient } from "@sluice/db";
import { ConfigurationError, retireVersion } from "@sluice/engine";
import { recordAuditEvent } from "../audit/record-audit-event";
import { staleRequestsOf } from "../change-requests/current-version";
import { prismaSqlClient } from "../change-requests/prisma-sql-client";
import { SYSTEM_RECONCILER } from "./reconcile-running-rollouts";

export interface TRetiredVersion {
  pipeline: string;
  rolloutId: string;
  /** The version number retired, and the tables dropped. */
  version: number;
  dropped: string[];
}

export async function retireKeptVersions(
  db: PrismaClient,
  opts: { now?: Date } = {},
): Promise<{ retired: TRetiredVersion[]; failed: { pipeline: string; error: string }[] }> {
  const now = opts.now ?? new Date();
  const due = await rowsOf(
    db,
    tables
      .selectFrom("rollouts as r")
      .innerJoin("pipelines as p", "p.id", "r.pipeline_id")
      .select(["r.id", "p.name as pipeline"])
      .where("r.state", "in", ["promoted", "rolled_back"])
      .where("r.previous_dropped_at", "is", null)
      .where(
        (eb) =>
          sql<Date>`${eb.ref("r.decided_at")} + make_interval(hours => ${eb.ref("r.keep_previous_hours")})`,
        "<=",
        now,
      )
      .orderBy("r.decided_at")
      .orderBy("r.id"),
  );
  const retired: TRetiredVersion[] = [];
  const failed: { pipeline: string; error: string }[] = [];
  for (const { id, pipeline } of due) {
    try {
      const done = await db.$transaction((tx) => retireOne(tx, id, pipeline), {
        timeout: 60_000,
        maxWait: 10_000,
      });
      if (done) retired.push(done);
    } catch (err) {
      failed.push({ pipeline, error: (err as Error).message });
    }
  }
  return { retired, failed };
}

async function retireOne(
  tx: Prisma.TransactionClient,
  id: bigint,
  pipeline: string,
): Promise<TRetiredVersion | null> {
  // Locked and read again: another worker may have retired it since the list was read.
  const r = await firstRowOf(
    tx,
    tables
      .selectFrom("rollouts as r")
      .innerJoin("pipeline_versions as b", "b.id", "r.blue_version_id")
      .innerJoin("pipeline_versions as g", "g.id", "r.green_version_id")
      .select((eb) => {
        const promoted = eb("r.state", "=", "promoted");
        return [
          "r.pipeline_id",
          "r.state",
          "r.keep_previous_hours as hours",
          "r.previous_dropped_at as dropped_at",
          eb
            .case()
            .when(promoted)
            .then(eb.ref("r.blue_version_id"))
            .else(eb.ref("r.green_version_id"))
            .end()
            .as("kept"),
          eb
            .case()
            .when(promoted)
            .then(eb.ref("b.version"))
            .else(eb.ref("g.version"))
            .end()
            .as("kept_version"),
          eb
            .case()
            .when(promoted)
            .then(eb.ref("r.green_version_id"))
            .else(eb.ref("r.blue_version_id"))
            .end()
            .as("serving"),
        ];
      })
      .where("r.id", "=", id)
      .forUpdate("r"),
  );
  if (!r || r.dropped_at || (r.state !== "promoted" && r.state !== "rolled_back")) return null;
  let dropped: string[];
  try {
    dropped = await retireVersion(prismaSqlClient(tx), { retired: r.kept, by: r.serving, why: "retired" });
  } catch (err) {
    if (err instanceof ConfigurationError) return null;
    throw err;
  }
  const staleRequests = await staleRequestsOf(
    tx,
    r.kept,
    `version ${r.kept_version} was retired: its state and tables were dropped`,
  );
  await countOf(
    tx,
    tables
      .updateTable("rollouts")
      .set({ previous_dropped_at: sql`now()`, updated_at: sql`now()` })
      .where("id", "=", id),
  );
  const why = `rollout #${id}: version ${r.kept_version} was kept ${r.hours} hours after the ${r.state === "promoted" ? "promotion" : "rollback"}; its state and tables are dropped`;
  await recordAuditEvent(tx, {
    ...SYSTEM_RECONCILER,
    from: { origin: "system" },
    action: "rollout.retire",
    target: { type: "pipeline", id: r.pipeline_id, label: pipeline },
    reason: why,
    after: { rollout: String(id), retired: r.kept_version, droppedTables: dropped, staleRequests },
  });
  return { pipeline, rolloutId: String(id), version: r.kept_version, dropped };
}
