// After a schema change is applied: which of the old version's quarantined rows the new contract
// would now accept — the rows "quarantined for reasons this change fixes", offered for replay on the
// request's card (the replay itself is dead-letters/request-dead-letter-replay.ts). Each quarantined
// payload is checked against the new version's contract with the engine's own checker, so "fixed"
// means exactly what the new version's batches would do with it. Rows already discarded, waiting to be
// replayed or replayed into the result are left out (so the count falls to 0 once they are replayed). Bounded: the newest MAX_SCANNED quarantined rows are checked (`capped` says when there were more).
import { contractChecker } from "@sluice/engine";
import { contractColumns, validateSpec } from "@sluice/pipeline-spec";
import { rowsOf, sql, tables, type PrismaClient } from "@sluice/db";
import { SETTLED_REPLAY_OUTCOMES } from "../dead-letters/request-dead-letter-replay";
import { ChangeRequestError } from "./change-request-view";

const MAX_SCANNED = 20_000;
const MAX_IDS = 5_000;

export interface TFixedQuarantine {
  /** The version whose dead letters these are (the one the request was made against). */
  version: number;
  count: number;
  /** Per reason (the value left out: `field "amount" should be int`), how many. */
  reasons: { reason: string; count: number }[];
  /** The dead letters' ids (up to MAX_IDS), for the replay request. */
  ids: string[];
  scanned: number;
  capped: boolean;
}

/** Reasons name the offending value; grouped without it so one kind of problem is one line. */
export const reasonKind = (reason: string) => reason.replace(/, got .*$/s, "");

export async function findFixedQuarantine(
  db: PrismaClient,
  changeRequestId: bigint,
): Promise<TFixedQuarantine | null> {
  const cr = await db.changeRequest.findUnique({
    where: { id: changeRequestId },
    select: { kind: true, status: true, pipelineVersionId: true, payload: true },
  });
  if (!cr) throw new ChangeRequestError(`no change request #${changeRequestId}`, "not_found");
  if (cr.kind !== "schema_change" || cr.status !== "applied") return null;
  const proposed = validateSpec((cr.payload as { proposed?: unknown }).proposed);
  if (!proposed.ok) return null;
  const version = await db.pipelineVersion.findUniqueOrThrow({
    where: { id: cr.pipelineVersionId },
    select: { version: true },
  });
  const checker = contractChecker(proposed.spec, contractColumns(proposed.spec));
  const rows = await rowsOf(
    db,
    tables
      .selectFrom("dead_letters as d")
      .select(["d.id", "d.reason", "d.payload"])
      .where("d.pipeline_version_id", "=", cr.pipelineVersionId)
      .where("d.outcome", "=", "quarantined")
      .where("d.payload", "is not", null)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom("dead_letter_resolutions as r")
              .select(eb.lit(1).as("one"))
              .whereRef("r.dead_letter_id", "=", "d.id"),
          ),
        ),
      )
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom("dead_letter_replay_items as i")
              .select(eb.lit(1).as("one"))
              .whereRef("i.dead_letter_id", "=", "d.id")
              .where((ei) =>
                ei.or([
                  ei("i.status", "=", "pending"),
                  ei("i.outcome", "=", ei.fn.any(sql<string[]>`${SETTLED_REPLAY_OUTCOMES}::text[]`)),
                ]),
              ),
          ),
        ),
      )
      .orderBy("d.id", "desc")
      .limit(MAX_SCANNED + 1),
  );
  const capped = rows.length > MAX_SCANNED;
  const byReason = new Map<string, number>();
  const ids: string[] = [];
  let count = 0;
  for (const r of rows.slice(0, MAX_SCANNED)) {
    if (r.payload === null || typeof r.payload !== "object" || Array.isArray(r.payload)) continue;
    if (checker.check(r.payload as Record<string, unknown>).kind !== "row") continue;
    count++;
    if (ids.length < MAX_IDS) ids.push(String(r.id));
    const kind = reasonKind(r.reason);
    byReason.set(kind, (byReason.get(kind) ?? 0) + 1);
  }
  return {
    version: version.version,
    count,
    reasons: [...byReason].map(([reason, n]) => ({ reason, count: n })).sort((a, b) => b.count - a.count),
    ids: ids.reverse(),
    scanned: Math.min(rows.length, MAX_SCANNED),
    capped,
  };
}
