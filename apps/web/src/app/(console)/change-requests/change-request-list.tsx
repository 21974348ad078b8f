"use client";
// The queue, newest first: every request by default (so one just approved stays in view, now applied),
// or only the open ones (pending, approved) or one status; refreshed while the page is open.
import { useQuery } from "@tanstack/react-query";
import type { TChangeRequestStatus } from "@sluice/services";
import { useState } from "react";
import { EmptyState } from "@/components/empty-state";
import { useTRPC } from "@/trpc/react";
import { ChangeRequestCard } from "./change-request-card";

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

export function ChangeRequestList() {
  const trpc = useTRPC();
  const [status, setStatus] = useState<(typeof FILTERS)[number]>("all");
  const me = useQuery(trpc.auth.me.queryOptions());
  const list = useQuery({
    ...trpc.change.list.queryOptions(status === "all" ? {} : { status }),
    refetchInterval: 5_000,
  });
  return (
    <div className="stack" data-testid="change-requests">
      <label className="filters">
        Show{" "}
        <select
          value={status}
          onChange={(e) => setStatus(e.target.value as typeof status)}
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
      ) : list.data.length === 0 ? (
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
        list.data.map((cr) => (
          <ChangeRequestCard
            key={cr.id}
            cr={cr}
            me={me.data ? { email: me.data.email, role: me.data.role } : undefined}
          />
        ))
      )}
    </div>
  );
}
