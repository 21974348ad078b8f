"use client";
// One change request: what is asked and why, its impact as computed when it was asked (per partition
// offsets and events re-read or skipped, what happens to the result, warnings), its status and
// decision, comments, and the buttons the signed-in user may use. A schema change shows what was
// observed, its diff and, once applied, the rows it fixes (schema-change-details.tsx). The requester sees no Approve:
// someone else must (the server refuses it anyway, four-eyes).
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { TChangeRequestView, TResetImpact } from "@sluice/services";
import Link from "next/link";
import { useState } from "react";
import { Time } from "@/components/time";
import { useTRPC } from "@/trpc/react";
import { SchemaChangeDetails } from "./schema-change-details";

const STATUS_CLASS: Record<TChangeRequestView["status"], string> = {
  pending: "badge badge--warn",
  approved: "badge badge--warn",
  applied: "badge badge--ok",
  rejected: "badge badge--bad",
  cancelled: "badge",
  failed: "badge badge--bad",
  stale: "badge",
};

export function ChangeRequestCard({
  cr,
  me,
}: {
  cr: TChangeRequestView;
  me: { email: string; role: string } | undefined;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [note, setNote] = useState("");
  const [comment, setComment] = useState("");
  const settle = { onSettled: () => queryClient.invalidateQueries() };
  const approve = useMutation(trpc.change.approve.mutationOptions(settle));
  const reject = useMutation(trpc.change.reject.mutationOptions(settle));
  const cancel = useMutation(trpc.change.cancel.mutationOptions(settle));
  const addComment = useMutation(
    trpc.change.comment.mutationOptions({ ...settle, onSuccess: () => setComment("") }),
  );
  const error = approve.error ?? reject.error ?? cancel.error ?? addComment.error;
  // A request the engine raised (requester "system") is nobody's own: any operator may approve it.
  const mine = me?.email === cr.requestedBy;
  const canDecide = me && (me.role === "operator" || me.role === "admin");
  const ref = { id: cr.id, pipeline: cr.pipeline };
  const busy = approve.isPending || reject.isPending || cancel.isPending;
  const payload = cr.payload as {
    to?: { kind: string; at?: string; offsets?: Record<string, number> };
    state?: string;
    needsEdit?: string | null;
  };
  // What cannot succeed is disabled, with the reason beside it (not only on hover).
  const cannotApprove =
    cr.kind === "schema_change" && payload.needsEdit
      ? "Nothing to approve: no contract type holds these values (see above)."
      : cr.kind === "schema_change" &&
          (cr.impact as { state?: { compatible?: boolean } } | null)?.state?.compatible === false
        ? "Approving would fail: the new version cannot continue the state (see above)."
        : null;

  return (
    <article
      className="panel stack"
      data-testid={`change-request-${cr.id}`}
      aria-label={`Change request ${cr.id}`}
    >
      <header className="webhook__head">
        <span className="strong">
          #{cr.id}{" "}
          {cr.kind === "checkpoint_reset"
            ? "Checkpoint reset"
            : cr.kind === "promotion"
              ? "Promotion"
              : "Schema change"}{" "}
          of{" "}
          <Link className="mono" href={`/pipelines/${encodeURIComponent(cr.pipeline)}`}>
            {cr.pipeline}
          </Link>{" "}
          v{cr.version}
        </span>
        <span className={STATUS_CLASS[cr.status]} data-testid="change-status">
          {cr.status}
        </span>
      </header>
      <p className="small">
        Asked by <span className="mono">{cr.requestedBy}</span> <Time value={cr.createdAt} />: &ldquo;
        {cr.reason}&rdquo;
        {payload.to ? (
          <>
            {" "}
            — to <strong>{describeTarget(payload.to)}</strong>, state{" "}
            <strong>{payload.state === "clear" ? "cleared" : "kept"}</strong>.
          </>
        ) : null}
      </p>
      {cr.kind === "checkpoint_reset" && cr.impact ? (
        <ResetImpact impact={cr.impact as TResetImpact} />
      ) : null}
      {cr.kind === "schema_change" ? <SchemaChangeDetails cr={cr} /> : null}
      {cr.decidedBy ? (
        <p className="small" data-testid="change-decision">
          {cr.status === "cancelled" ? "Cancelled" : cr.status === "rejected" ? "Rejected" : "Approved"} by{" "}
          <span className="mono">{cr.decidedBy}</span> <Time value={cr.decidedAt} />
          {cr.decisionNote ? <> (&ldquo;{cr.decisionNote}&rdquo;)</> : null}
          {cr.appliedAt ? (
            <>
              ; applied <Time value={cr.appliedAt} />
            </>
          ) : null}
          .
        </p>
      ) : cr.status === "stale" ? (
        <p className="small">Stale: {cr.decisionNote}. Ask again against the current version.</p>
      ) : null}
      {cr.status === "pending" ? (
        <div className="lifecycle__form">
          {mine ? (
            <p className="muted small">You asked for this: someone else must approve it (four-eyes).</p>
          ) : null}
          {!mine && !canDecide ? (
            <p className="muted small">Approving needs the operator role; you can follow and comment.</p>
          ) : null}
          {!mine && canDecide ? (
            <label className="form__field">
              Note (recorded with your decision; required to reject)
              <input name="note" value={note} onChange={(e) => setNote(e.target.value)} maxLength={2000} />
            </label>
          ) : null}
          <div className="lifecycle__buttons">
            {!mine && canDecide ? (
              <>
                <button
                  className="button button--primary button--small"
                  type="button"
                  disabled={busy || cannotApprove !== null}
                  aria-describedby={cannotApprove ? `cannot-approve-${cr.id}` : undefined}
                  onClick={() => approve.mutate({ ...ref, note })}
                >
                  Approve and apply
                </button>
                <button
                  className="button button--small"
                  type="button"
                  disabled={busy}
                  onClick={() => reject.mutate({ ...ref, note })}
                >
                  Reject
                </button>
              </>
            ) : null}
            {mine ? (
              <button
                className="button button--small"
                type="button"
                disabled={busy}
                onClick={() => cancel.mutate(ref)}
              >
                Cancel my request
              </button>
            ) : null}
            {!mine && canDecide && cannotApprove ? (
              <span className="small warn" id={`cannot-approve-${cr.id}`} data-testid="cannot-approve">
                {cannotApprove}
              </span>
            ) : null}
          </div>
          {cr.kind === "schema_change" ? (
            <p className="muted small" data-testid="how-to-change">
              A request is not edited in place: to declare the field differently, change the spec on the{" "}
              <Link href={`/pipelines/${encodeURIComponent(cr.pipeline)}/edit`}>
                pipeline&apos;s Edit page
              </Link>{" "}
              (a breaking change raises a request of its own, and this one goes stale), or reject this one
              with a note.
            </p>
          ) : null}
        </div>
      ) : null}
      {error ? (
        <p className="form__error" role="alert">
          {error.message}
        </p>
      ) : null}
      <details className="small" open={cr.comments.length > 0}>
        <summary>Comments ({cr.comments.length})</summary>
        <ul className="plain">
          {cr.comments.map((c, i) => (
            <li key={i}>
              <span className="mono">{c.author}</span> <Time value={c.createdAt} />: {c.body}
            </li>
          ))}
        </ul>
        <form
          className="lifecycle__buttons"
          onSubmit={(e) => {
            e.preventDefault();
            addComment.mutate({ ...ref, body: comment });
          }}
        >
          <input
            aria-label="Comment"
            value={comment}
            onChange={(e) => setComment(e.target.value)}
            maxLength={4000}
            placeholder="Ask or answer a question"
          />
          <button
            className="button button--small"
            type="submit"
            disabled={addComment.isPending || !comment.trim()}
          >
            Comment
          </button>
        </form>
      </details>
    </article>
  );
}

function describeTarget(to: { kind: string; at?: string; offsets?: Record<string, number> }): string {
  if (to.kind === "timestamp") return `the events since ${to.at}`;
  if (to.kind === "offsets")
    return `offsets ${Object.entries(to.offsets ?? {})
      .map(([p, o]) => `${p}:${o}`)
      .join(", ")}`;
  return to.kind;
}

export function ResetImpact({ impact }: { impact: TResetImpact }) {
  return (
    <div className="stack" data-testid="reset-impact">
      <table className="table table--compact">
        <thead>
          <tr>
            <th className="num">Partition</th>
            <th className="num">Checkpoint</th>
            <th className="num">Reset to</th>
            <th className="num">Log start–end</th>
            <th className="num">Re-read</th>
            <th className="num">Skipped</th>
            <th>Warning</th>
          </tr>
        </thead>
        <tbody>
          {impact.partitions.map((p) => (
            <tr key={p.partition}>
              <td className="num">{p.partition}</td>
              <td className="num">{p.current}</td>
              <td className="num">{p.target}</td>
              <td className="num">
                {p.low}–{p.high}
              </td>
              <td className="num">{p.reprocessed}</td>
              <td className="num">{p.skipped}</td>
              <td className="small">{p.warning ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="small" data-testid="reset-result">
        <strong>
          {impact.reprocessed} event(s) re-read, {impact.skipped} skipped.
        </strong>{" "}
        Result: {impact.result}.
      </p>
    </div>
  );
}
