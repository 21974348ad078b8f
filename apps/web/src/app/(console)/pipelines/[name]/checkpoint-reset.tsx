"use client";
// The pipeline page's checkpoint section: ask for a reset (it becomes a change request someone else
// approves; the answer shows its impact or the refusal with its reason) and the resets applied so
// far — the discontinuities in the batch history (after which batch, offsets before → after, who).
// It resets the checkpoint of the version the page shows, and says which.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { TResetImpact } from "@sluice/services";
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { ResetImpact } from "../../change-requests/change-request-card";
import { useTRPC } from "@/trpc/react";
import { Time } from "@/components/time";

type TKind = "earliest" | "latest" | "timestamp" | "offsets";

/** "0:120, 1:80" → { "0": 120, "1": 80 }; null when it does not read as partition:offset pairs. */
export function parseOffsets(text: string): Record<string, number> | null {
  const pairs = text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((p) => /^(\d+):(\d+)$/.exec(p));
  if (pairs.length === 0 || pairs.some((m) => !m)) return null;
  return Object.fromEntries(pairs.map((m) => [m![1]!, Number(m![2])]));
}

export function CheckpointReset({
  pipeline,
  version,
  serving,
}: {
  pipeline: string;
  version: number;
  serving: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const may = useQuery(trpc.pipeline.may.queryOptions({ pipeline }));
  const resets = useQuery({ ...trpc.change.resets.queryOptions({ pipeline }), refetchInterval: 10_000 });
  const [kind, setKind] = useState<TKind>("timestamp");
  const [at, setAt] = useState("");
  const [offsets, setOffsets] = useState("");
  const [state, setState] = useState<"keep" | "clear">("keep");
  const [reason, setReason] = useState("");
  const [formError, setFormError] = useState<string | null>(null);
  const request = useMutation(
    trpc.change.requestReset.mutationOptions({ onSettled: () => queryClient.invalidateQueries() }),
  );
  const allowed = may.data?.["change.request"];

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setFormError(null);
    if (kind === "timestamp" && !at) return setFormError("Time: choose when to re-read from.");
    const parsed = kind === "offsets" ? parseOffsets(offsets) : null;
    if (kind === "offsets" && !parsed)
      return setFormError('Offsets: write partition:offset pairs, e.g. "0:120, 1:80".');
    const to =
      kind === "timestamp"
        ? { kind, at: new Date(at) }
        : kind === "offsets"
          ? { kind, offsets: parsed! }
          : { kind };
    request.mutate({ pipeline, version, to, state, reason });
  };

  return (
    <section className="panel stack" data-testid="checkpoint-reset">
      <h2 className="panel__title">Checkpoint reset</h2>
      <p className="muted small">
        Re-read or skip events by moving the checkpoint. It becomes a{" "}
        <Link href="/change-requests">change request</Link>: someone other than you approves it, and it is
        applied at once, fenced against the batch in flight. Its impact is shown before anyone approves it; a
        reset that would make the result wrong is refused with the reason.{" "}
        <strong>
          It moves the checkpoint of version {version}
          {serving ? " (serving)" : " (not the serving version)"} only.
        </strong>
      </p>
      {allowed?.ok ? (
        <form
          className="filters"
          onSubmit={submit}
          aria-label={`Request a checkpoint reset of ${pipeline} version ${version}`}
        >
          <label>
            To{" "}
            <select name="kind" value={kind} onChange={(e) => setKind(e.target.value as TKind)}>
              <option value="timestamp">a time</option>
              <option value="earliest">earliest</option>
              <option value="latest">latest</option>
              <option value="offsets">offsets</option>
            </select>
          </label>
          {kind === "timestamp" ? (
            <label>
              Time{" "}
              <input
                name="at"
                type="datetime-local"
                step={1}
                value={at}
                onChange={(e) => setAt(e.target.value)}
              />
            </label>
          ) : null}
          {kind === "offsets" ? (
            <label>
              Offsets{" "}
              <input
                name="offsets"
                value={offsets}
                onChange={(e) => setOffsets(e.target.value)}
                placeholder="0:120, 1:80"
              />
            </label>
          ) : null}
          <label>
            State{" "}
            <select name="state" value={state} onChange={(e) => setState(e.target.value as "keep" | "clear")}>
              <option value="keep">keep</option>
              <option value="clear">clear</option>
            </select>
          </label>
          <label>
            Reason{" "}
            <input
              name="reason"
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              maxLength={2000}
              required
              placeholder="why re-read"
            />
          </label>
          <button className="button button--small button--primary" type="submit" disabled={request.isPending}>
            {request.isPending ? "Resolving offsets…" : "Request reset"}
          </button>
        </form>
      ) : allowed ? (
        <p className="muted small">{allowed.message}</p>
      ) : null}
      {formError ? (
        <p className="form__error" role="alert">
          {formError}
        </p>
      ) : null}
      {request.isError ? (
        <p className="form__error" role="alert" data-testid="reset-refused">
          {request.error.message}
        </p>
      ) : null}
      {request.isSuccess ? (
        <div className="notice small" role="status">
          Change request <Link href="/change-requests">#{request.data.id}</Link> is waiting for someone
          else&apos;s approval.
          <ResetImpact impact={request.data.impact as TResetImpact} />
        </div>
      ) : null}
      {resets.data && resets.data.length > 0 ? (
        <table className="table table--compact" data-testid="checkpoint-resets">
          <caption className="small">Discontinuities in the batch history</caption>
          <thead>
            <tr>
              <th>When</th>
              <th className="num">Version</th>
              <th className="num">After batch</th>
              <th>Offsets before → after</th>
              <th>State</th>
              <th>Asked by / approved by</th>
              <th>Request</th>
            </tr>
          </thead>
          <tbody>
            {resets.data.map((r) => (
              <tr key={r.changeRequestId}>
                <td>
                  <Time value={r.at} />
                </td>
                <td className="num">v{r.version}</td>
                <td className="num">{r.afterBatchId}</td>
                <td className="mono small">
                  {fmt(r.offsetsBefore)} → {fmt(r.offsetsAfter)}
                </td>
                <td>{r.stateCleared ? "cleared" : "kept"}</td>
                <td className="mono small">
                  {r.requestedBy} / {r.approvedBy}
                </td>
                <td>#{r.changeRequestId}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

const fmt = (o: Record<string, number>) =>
  Object.entries(o)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([p, v]) => `${p}:${v}`)
    .join(" ");
