"use client";
// The queue, newest first: every request by default (so one just approved stays in view, now applied),
// or only the open ones (pending, approved) or one status; refreshed while the page is open. Paged,
// PAGE_SIZE requests at a time (by request number, so a request raised meanwhile shifts no page).
import { useQuery } from "@tanstack/react-query";
import type { TChangeRequestStatus } from "@sluice/services";
import { useState } from "react";
import { EmptyState } from "@/components/empty-state";
import { useTRPC } from "@/trpc/react";
import { ChangeRequestCard } from "./change-request-card";
import { ProducerFaults } from "./producer-faults";

const FILTERS: ("open" | TChangeRequestStatus | "all")[] = [
  "all",
  "open",
  "pending",
  "applied",
  "rejected",
  "cancelled",
  "stale",
  "failed",
];

const PAGE_SIZE = 10;

export function ChangeRequestList() {
  const trpc = useTRPC();
  const [status, setStatus] = useState<(typeof FILTERS)[number]>("all");
  // The pages seen so far, by the request number each starts below (undefined: the newest).
  const [pages, setPages] = useState<(string | undefined)[]>([undefined]);
  const before = pages.at(-1);
  const me = useQuery(trpc.auth.me.queryOptions());
  const list = useQuery({
    ...trpc.change.list.queryOptions({
      ...(status === "all" ? {} : { status }),
      ...(before ? { before } : {}),
      limit: PAGE_SIZE + 1,
    }),
    refetchInterval: 5_000,
  });
  const shown = list.data?.slice(0, PAGE_SIZE) ?? [];
  const more = (list.data?.length ?? 0) > PAGE_SIZE;
  const pager = (
    <nav className="filters" aria-label="Pages of change requests" data-testid="change-pager">
      <button
        type="button"
        className="button button--small"
        disabled={pages.length === 1}
        onClick={() => setPages((p) => p.slice(0, -1))}
      >
        Newer
      </button>
      <span className="small muted">
        Page {pages.length}
        {shown.length > 0 ? ` (#${shown[0]!.id} – #${shown.at(-1)!.id})` : ""}
      </span>
      <button
        type="button"
        className="button button--small"
        disabled={!more}
        onClick={() => setPages((p) => [...p, shown.at(-1)!.id])}
      >
        Older
      </button>
    </nav>
  );
  return (
    <div className="stack" data-testid="change-requests">
      <ProducerFaults canDismiss={me.data?.role === "operator" || me.data?.role === "admin"} />
      <label className="filters">
        Show{" "}
        <select
          value={status}
          onChange={(e) => {
            setStatus(e.target.value as typeof status);
            setPages([undefined]);
          }}
          aria-label="Status"
        >
          {FILTERS.map((f) => (
            <option key={f} value={f}>
              {f}
            </option>
          ))}
        </select>
      </label>
      {list.isPending ? (
        <p className="muted">Loading change requests…</p>
      ) : list.isError ? (
        <p className="form__error" role="alert">
          Could not load change requests: {list.error.message}
        </p>
      ) : shown.length === 0 && pages.length === 1 ? (
        <EmptyState
          title={status === "open" ? "No open change requests" : "No change requests"}
          next={
            <>
              Ask for a checkpoint reset on a pipeline&apos;s page (section &ldquo;Checkpoint reset&rdquo;),
              or with <code>npx sluice reset &lt;pipeline&gt; --to …</code>.
            </>
          }
        >
          <p>
            A checkpoint reset (to earliest, latest, a time or explicit offsets) waits here with its impact
            until someone other than the requester approves it; approving applies it at once, fenced against
            the running batch.
          </p>
        </EmptyState>
      ) : (
        <>
          {shown.map((cr) => (
            <ChangeRequestCard
              key={cr.id}
              cr={cr}
              me={me.data ? { email: me.data.email, role: me.data.role } : undefined}
            />
          ))}
          {pager}
        </>
      )}
    </div>
  );
}
