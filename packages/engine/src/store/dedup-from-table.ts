// A ledger whose table keeps its dedup keys (batch/dedup.ts dedupKeptBySink) has no dedup state to hand
// the version that continues it. When that successor needs dedup state — it writes another table (the
// table was renamed) or is no such ledger (it now aggregates) — it is handed the keys from the ledger's
// table at registration instead: the rows whose dedup time is not before the horizon the ledger's
// dedup state would have had at its checkpoint, i.e. exactly the keys that state would hold. They
// count in the checkpoint's state size like any dedup key, and are evicted like any.
import { quoteIdentifier, specTiming, type TPipelineSpec } from "@sluice/pipeline-spec";
import { dedupKeptBySink } from "../batch/dedup";
import { physicalSql, servingName } from "./physical-sink-table";
import { loadSinkTables } from "./serving-views";
import type { SqlClient } from "./sql-client";

/** Called once `to` continues `from`'s checkpoint (register-version.ts), after `from`'s dedup state was copied. */
export async function handDedupKeysFromTable(
  client: SqlClient,
  from: string,
  to: string,
  before: TPipelineSpec,
  after: TPipelineSpec,
): Promise<void> {
  const kept = dedupKeptBySink(before);
  const table = before.sink?.postgres?.table;
  if (!kept || !table || !after.dedupe) return;
  // The same kind of ledger on the same table: the table goes on refusing the keys itself.
  const afterTable = after.sink?.postgres?.table;
  if (dedupKeptBySink(after) && afterTable && servingName(afterTable) === servingName(table)) return;
  const physical = (await loadSinkTables(client, from))[servingName(table)];
  if (!physical) return;

  // A ledger has no allowedLateness: keys are kept from the watermark on, or for `within` before the
  // newest dedup time seen (batch/dedup.ts dedupHorizon). No horizon yet: every key is kept.
  const withinMs = specTiming(before).dedupeWithinMs;
  const key = quoteIdentifier(kept.key);
  const time = quoteIdentifier(kept.time);
  await client.query(
    `WITH horizon AS (
       SELECT CASE WHEN $3::interval IS NULL THEN o.watermark
                   ELSE (o.event_time_max ->> 'dedupTime')::timestamptz - $3::interval END AS h
         FROM checkpoints o WHERE o.pipeline_version_id = $1),
     handed AS (
       INSERT INTO dedup_state (pipeline_version_id, key, event_time)
       SELECT $2, t.${key}, t.${time} FROM ${physicalSql(physical)} t, horizon
        WHERE horizon.h IS NULL OR t.${time} >= horizon.h
       ON CONFLICT DO NOTHING RETURNING key)
     UPDATE checkpoints SET state_rows = state_rows + (SELECT count(*) FROM handed),
            state_bytes = state_bytes + (SELECT coalesce(sum(octet_length(key) + 8), 0) FROM handed)
      WHERE pipeline_version_id = $2`,
    [from, to, withinMs === undefined ? null : `${withinMs} milliseconds`],
  );
}
