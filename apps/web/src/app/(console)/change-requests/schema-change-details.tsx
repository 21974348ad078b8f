"use client";
// A schema change request's details: what the engine observed (field, inferred type, count, first and
// last seen, sample rows), the contract diff classified, the downstream parts that use a changed or
// removed field, whether the new version continues the state — and once applied, what was registered
// and how many of the old version's quarantined rows the new contract accepts, offered for replay.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { TAppliedSchemaChange, TChangeRequestView, TSchemaChangeImpact } from "@sluice/services";
import { Time } from "@/components/time";
import { useTRPC } from "@/trpc/react";

interface TObserved {
  field: string;
  outcome: "rescued" | "quarantined";
  inferredType: string;
  declaredType?: string;
  /** Rows per type the values would be declared as (requests raised before it was counted have none). */
  types?: Record<string, number>;
  count: number;
  firstSeen: string;
  lastSeen: string;
  samples: Record<string, unknown>[];
}

export function SchemaChangeDetails({ cr }: { cr: TChangeRequestView }) {
  const payload = (cr.payload ?? {}) as { observed?: TObserved[] | null; needsEdit?: string | null };
  const impact = cr.impact as TSchemaChangeImpact | null;
  return (
    <div className="stack small" data-testid="schema-change">
      {payload.observed && payload.observed.length > 0 ? <Observed observed={payload.observed} /> : null}
      {payload.needsEdit ? (
        // No proposal, so no contract diff to show: "compatible" beside "no safe proposal" read as a contradiction.
        <p className="form__error" data-testid="needs-edit">
          No contract type holds these values, so this request proposes no change: {payload.needsEdit}
        </p>
      ) : impact ? (
        <SchemaImpact impact={impact} />
      ) : null}
      {cr.status === "applied" && cr.result ? (
        <Applied cr={cr} result={cr.result as TAppliedSchemaChange} />
      ) : null}
      {cr.status === "failed" && cr.result ? (
        <p className="form__error" data-testid="apply-failed">
          Applying failed (retrying would not help): {(cr.result as { error?: string }).error}
        </p>
      ) : null}
    </div>
  );
}

function Observed({ observed }: { observed: TObserved[] }) {
  return (
    <div className="stack" data-testid="observed-fields">
      <table className="table table--compact">
        <thead>
          <tr>
            <th>Field</th>
            <th>Seen as</th>
            <th>Arrived as (rows per type)</th>
            <th className="num">Rows</th>
            <th>First seen</th>
            <th>Last seen</th>
          </tr>
        </thead>
        <tbody>
          {observed.map((o) => (
            <tr key={`${o.outcome}:${o.field}`} data-testid={`observed-${o.field}`}>
              <td className="mono">{o.field}</td>
              <td>
                {o.outcome === "rescued"
                  ? "unknown, rescued into _rescued"
                  : o.declaredType
                    ? `quarantined (declared ${o.declaredType})`
                    : "unknown, quarantined"}
              </td>
              <td className="mono" data-testid="observed-types">
                {typeSet(o)}
              </td>
              <td className="num" data-testid="observed-count">
                {o.count}
              </td>
              <td>
                <Time value={new Date(o.firstSeen)} />
              </td>
              <td>
                <Time value={new Date(o.lastSeen)} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {observed.map((o) => (
        <details key={`s:${o.outcome}:${o.field}`}>
          <summary>
            Sample rows with <span className="mono">{o.field}</span> ({o.samples.length})
          </summary>
          <pre className="mono small" data-testid={`samples-${o.field}`}>
            {o.samples.map((s) => JSON.stringify(s)).join("\n")}
          </pre>
        </details>
      ))}
    </div>
  );
}

/** The types the values arrived as, most rows first: "json × 20, boolean × 3". */
function typeSet(o: TObserved): string {
  const types = Object.entries(o.types ?? {}).filter(([, n]) => n > 0);
  // Requests raised before types were counted hold "json (later also boolean) (later also json)…": the set.
  if (types.length === 0)
    return [...new Set(o.inferredType.split(/\)? \(later also |\)$/))].filter(Boolean).join(", ");
  return types
    .sort((a, b) => b[1] - a[1])
    .map(([t, n]) => `${t} × ${n}`)
    .join(", ");
}

/** The contract diff classified, what downstream uses a changed field, whether state continues. */
function SchemaImpact({ impact }: { impact: TSchemaChangeImpact }) {
  return (
    <div className="stack" data-testid="schema-impact">
      <p>
        Contract change:{" "}
        <strong className={impact.contract.compatibility === "breaking" ? "bad" : undefined}>
          {impact.contract.compatibility}
        </strong>
        ;{" "}
        {impact.state.compatible
          ? "the new version continues the state from the same offsets."
          : "the new version cannot continue the state (approving will fail):"}
      </p>
      <ul className="plain">
        {impact.contract.changes.map((c, i) => (
          <li key={i}>
            {c.compatible ? "compatible" : "breaking"}: {c.reason}
          </li>
        ))}
        {impact.state.problems.map((p, i) => (
          <li key={`s${i}`}>state: {p.reason}</li>
        ))}
        {impact.downstream.map((d) => (
          <li key={d.field}>
            <span className="mono">{d.field}</span> is used by {d.uses.join(", ")}
          </li>
        ))}
      </ul>
    </div>
  );
}

function Applied({ cr, result }: { cr: TChangeRequestView; result: TAppliedSchemaChange }) {
  const trpc = useTRPC();
  // The id as text: query keys are hashed as JSON, which has no BigInt.
  const queryClient = useQueryClient();
  const fixed = useQuery(trpc.change.fixedQuarantine.queryOptions({ id: cr.id }));
  const may = useQuery(trpc.pipeline.may.queryOptions({ pipeline: cr.pipeline }));
  const mayReplay = may.data?.["deadletter.replay"];
  // The rows go through the dead-letter replay (its refusals included): the workers apply them in the new version's next batch.
  const replay = useMutation(
    trpc.deadLetter.replay.mutationOptions({ onSuccess: () => queryClient.invalidateQueries() }),
  );
  return (
    <div className="stack" data-testid="schema-applied">
      <p>
        Version <strong>{result.version}</strong> registered, continuing version {result.previousVersion}{" "}
        after batch {result.afterBatchId} from the same offsets (
        <span className="mono">
          {Object.entries(result.offsets)
            .map(([p, o]) => `${p}:${o}`)
            .join(", ") || "none yet"}
        </span>
        ); its run is {result.run}.
        {result.sinkChanges.length > 0 ? ` Sink table: ${result.sinkChanges.join("; ")}.` : ""}
      </p>
      {fixed.data && fixed.data.count > 0 ? (
        <div className="stack" data-testid="fixed-quarantine">
          <p>
            <strong>{fixed.data.count}</strong> row(s) of version {fixed.data.version} were quarantined for
            reasons this change fixes
            {fixed.data.capped ? ` (among the newest ${fixed.data.scanned} checked)` : ""}:
          </p>
          <ul className="plain">
            {fixed.data.reasons.map((r) => (
              <li key={r.reason}>
                {r.count} × {r.reason}
              </li>
            ))}
          </ul>
          {mayReplay?.ok ? (
            <button
              type="button"
              className="button button--small button--primary"
              disabled={replay.isPending || replay.isSuccess}
              onClick={() =>
                replay.mutate({
                  pipeline: cr.pipeline,
                  ids: fixed.data?.ids ?? [],
                  note: `fixed by schema change request #${cr.id}`,
                })
              }
            >
              {replay.isPending
                ? "Queueing…"
                : `Replay ${fixed.data.count} row(s) into version ${result.version}`}
            </button>
          ) : mayReplay ? (
            <p className="muted">{mayReplay.message}</p>
          ) : null}
          {replay.isError ? (
            <p className="form__error" role="alert">
              {replay.error.message}
            </p>
          ) : null}
        </div>
      ) : fixed.data ? (
        <p className="muted">
          No quarantined rows of version {fixed.data.version} are fixed by this change
          {replay.isSuccess ? " and waiting" : ""}.
        </p>
      ) : null}
      {/* Outside the list above: once queued, the rows are no longer "fixed and waiting", so the list empties. */}
      {replay.isSuccess ? (
        <p className="notice" role="status" data-testid="fixed-replay-result">
          {replay.data.accepted > 0
            ? `Replay #${replay.data.replayId}: ${replay.data.accepted} row(s) queued into version ${replay.data.version}; its next batch applies them (the pipeline's dead letters show each row's outcome).`
            : "Nothing was queued."}
          {replay.data.refused.length > 0
            ? ` ${replay.data.refused.length} refused (the pipeline's dead letters show why).`
            : ""}
        </p>
      ) : null}
    </div>
  );
}
