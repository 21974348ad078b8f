"use client";
// The audit log as a table: the Audit page (every event, with filters and CSV export) and a pipeline
// page's own history (`pipeline` fixed). Newest first, 50 at a time; "Older" follows the cursor.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { TAuditEventView, TFindAuditEventsInput } from "@sluice/services";
import { useState, type FormEvent } from "react";
import { Time } from "@/components/time";
import { useTRPC } from "@/trpc/react";

type TFilters = {
  actor: string;
  action: string;
  target: string;
  outcome: "" | "succeeded" | "refused";
  from: string;
  to: string;
};
const NO_FILTERS: TFilters = { actor: "", action: "", target: "", outcome: "", from: "", to: "" };
const REFRESH_MS = 10_000;

function toInput(f: TFilters, pipeline?: string): TFindAuditEventsInput {
  return {
    ...(f.actor ? { actor: f.actor } : {}),
    ...(f.action ? { action: f.action } : {}),
    ...(f.target ? { target: f.target } : {}),
    ...(f.outcome ? { outcome: f.outcome } : {}),
    ...(f.from ? { from: new Date(f.from) } : {}),
    ...(f.to ? { to: new Date(f.to) } : {}),
    ...(pipeline ? { pipeline } : {}),
  };
}

export function AuditLog({ pipeline, limit = 50 }: { pipeline?: string; limit?: number }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<TFilters>(NO_FILTERS);
  const [filters, setFilters] = useState<TFilters>(NO_FILTERS);
  const [pages, setPages] = useState<string[]>([]);
  const input = {
    ...toInput(filters, pipeline),
    limit,
    ...(pages.length ? { before: BigInt(pages.at(-1)!) } : {}),
  };
  const list = useQuery({ ...trpc.audit.list.queryOptions(input), refetchInterval: REFRESH_MS });
  const [exporting, setExporting] = useState<string | null>(null);

  const apply = (e: FormEvent) => {
    e.preventDefault();
    setPages([]);
    setFilters(draft);
  };
  const download = async () => {
    setExporting("Preparing the export…");
    try {
      const { filename, csv } = await queryClient.fetchQuery({
        ...trpc.audit.exportCsv.queryOptions(toInput(filters, pipeline)),
        staleTime: 0,
      });
      const url = URL.createObjectURL(new Blob([csv], { type: "text/csv;charset=utf-8" }));
      const a = document.createElement("a");
      a.href = url;
      a.download = filename;
      a.click();
      URL.revokeObjectURL(url);
      setExporting(null);
    } catch (err) {
      setExporting(`Could not export: ${(err as Error).message}`);
    }
  };
  const set = (k: keyof TFilters) => (e: { target: { value: string } }) =>
    setDraft({ ...draft, [k]: e.target.value });

  return (
    <div className="stack" data-testid={pipeline ? "pipeline-history" : "audit-log"}>
      {pipeline ? null : (
        <form className="filters" onSubmit={apply} aria-label="Filter the audit log">
          <label>
            Actor{" "}
            <input
              name="actor"
              value={draft.actor}
              onChange={set("actor")}
              placeholder="email or part of it"
            />
          </label>
          <label>
            Action{" "}
            <input
              name="action"
              value={draft.action}
              onChange={set("action")}
              placeholder="e.g. pipeline or change.approve"
            />
          </label>
          <label>
            Target{" "}
            <input
              name="target"
              value={draft.target}
              onChange={set("target")}
              placeholder="pipeline, user or team"
            />
          </label>
          <label>
            Outcome{" "}
            <select name="outcome" value={draft.outcome} onChange={set("outcome")}>
              <option value="">any</option>
              <option value="succeeded">succeeded</option>
              <option value="refused">refused</option>
            </select>
          </label>
          <label>
            From <input name="from" type="datetime-local" value={draft.from} onChange={set("from")} />
          </label>
          <label>
            To <input name="to" type="datetime-local" value={draft.to} onChange={set("to")} />
          </label>
          <button className="button button--small button--primary" type="submit">
            Filter
          </button>
          <button className="button button--small" type="button" onClick={() => void download()}>
            Export CSV
          </button>
          {exporting ? (
            <span className="muted small" role="status">
              {exporting}
            </span>
          ) : null}
        </form>
      )}
      {list.isPending ? (
        <p className="muted">Loading the audit log…</p>
      ) : list.isError ? (
        <p className="form__error" role="alert">
          Could not load the audit log: {list.error.message}
        </p>
      ) : list.data.events.length === 0 ? (
        <p className="muted" data-testid="audit-empty">
          {pipeline
            ? "Nothing recorded for this pipeline yet: lifecycle commands, registrations and change requests appear here."
            : "No event matches these filters. Clear a filter or widen the time range."}
        </p>
      ) : (
        <>
          <AuditTable events={list.data.events} showTarget={!pipeline} />
          <div className="lifecycle__buttons">
            {pages.length > 0 ? (
              <button
                className="button button--small"
                type="button"
                onClick={() => setPages(pages.slice(0, -1))}
              >
                Newer
              </button>
            ) : null}
            {list.data.nextBefore ? (
              <button
                className="button button--small"
                type="button"
                onClick={() => setPages([...pages, list.data.nextBefore!])}
              >
                Older
              </button>
            ) : null}
          </div>
        </>
      )}
    </div>
  );
}

function AuditTable({ events, showTarget }: { events: TAuditEventView[]; showTarget: boolean }) {
  return (
    <table className="table table--compact" data-testid="audit-table">
      <thead>
        <tr>
          <th>When</th>
          <th>Actor</th>
          <th>Action</th>
          {showTarget ? <th>Target</th> : null}
          <th>Reason</th>
          <th>Change</th>
          <th>From</th>
        </tr>
      </thead>
      <tbody>
        {events.map((e) => (
          <tr
            key={e.id}
            data-action={e.action}
            className={e.outcome === "refused" ? "row--problem" : undefined}
          >
            <td className="muted">
              <Time value={e.occurredAt} />
            </td>
            <td className="mono">{e.actor}</td>
            <td>
              <span className="mono">{e.action}</span>
              {e.outcome === "refused" ? <span className="badge badge--bad"> refused</span> : null}
            </td>
            {showTarget ? <td className="mono">{e.targetLabel ?? e.targetId ?? "—"}</td> : null}
            <td className="small">{e.reason || <span className="muted">—</span>}</td>
            <td className="small mono">{change(e)}</td>
            <td className="muted small">
              {e.origin}
              {e.ipAddress ? ` ${e.ipAddress}` : ""}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function change(e: TAuditEventView): string {
  const b = e.before === null || e.before === undefined ? "" : JSON.stringify(e.before);
  const a = e.after === null || e.after === undefined ? "" : JSON.stringify(e.after);
  if (b && a) return `${b} → ${a}`;
  return a || b || "—";
}
