"use client";
// The dead letters panel with replay: rows chosen by checkbox, or "all with this reason", replayed
// through the pipeline's serving version with a reason (deadLetter.replay). The server decides which
// rows it accepts and refuses each of the others naming why; the answer is shown as it came, and each
// row's replay status (pending, replayed into batch N by whom, refused why) follows the panel's refresh.
import type { TDeadLetterOutcome, TDeadLetterSummary } from "@sluice/services";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/trpc/react";
import { DeadLetters } from "./dead-letters";
import { DiscardDeadLetters } from "./discard-dead-letters";

type TChoice = { kind: "ids" } | { kind: "reason"; reason: string; outcome: TDeadLetterOutcome };

export function DeadLettersPanel({ pipeline, summary }: { pipeline: string; summary: TDeadLetterSummary }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const may = useQuery(trpc.pipeline.may.queryOptions({ pipeline }));
  const [selected, setSelected] = useState<ReadonlySet<number>>(new Set());
  const [choice, setChoice] = useState<TChoice>({ kind: "ids" });
  const [note, setNote] = useState("");
  const replay = useMutation(
    trpc.deadLetter.replay.mutationOptions({
      onSuccess: () => {
        setSelected(new Set());
        void queryClient.invalidateQueries({ queryKey: trpc.pipeline.deadLetters.queryKey() });
      },
    }),
  );
  const allowed = may.data?.["deadletter.replay"]?.ok === true;
  const toggle = (id: number) => {
    setChoice({ kind: "ids" });
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (choice.kind === "reason") replay.mutate({ pipeline, reason: choice.reason, outcome: choice.outcome, note });
    else replay.mutate({ pipeline, ids: [...selected], note });
  };
  const what = choice.kind === "reason" ? `all ${choice.outcome.replace("_", " ")} rows with reason “${choice.reason}” (every version)` : `${selected.size} selected row(s)`;
  const ready = choice.kind === "reason" || selected.size > 0;
  return (
    <>
      <DeadLetters summary={summary} {...(allowed ? { select: { selected, toggle, replayReason: (g) => setChoice({ kind: "reason", ...g }) } } : {})} />
      {allowed && summary.counts.total > 0 ? (
        <section className="panel stack" data-testid="replay-dead-letters">
          <h3 className="section-title">Replay dead letters</h3>
          <p className="muted small">
            Replays the rows through version {summary.version}&apos;s contract, expectations and sink, in the pipeline&apos;s own next batch (offsets and watermark unchanged). Each row reaches the sink at most once; rows that cannot be applied correctly — already replayed, discarded, truncated, or with a window already final and evicted — are refused, each with why. Choose rows with the checkboxes, or <strong>Replay all…</strong> on a reason.
          </p>
          <form className="filters" onSubmit={submit} aria-label="Replay dead letters">
            <span className="small" data-testid="replay-choice">
              {ready ? `Replay ${what}` : "No rows chosen yet"}
            </span>
            {choice.kind === "reason" ? (
              <button type="button" className="button button--small" onClick={() => setChoice({ kind: "ids" })}>
                Choose rows instead
              </button>
            ) : null}
            <label>
              Why <input value={note} onChange={(e) => setNote(e.target.value)} required maxLength={2000} placeholder="recorded with your name" />
            </label>
            <button className="button button--small" type="submit" disabled={!ready || replay.isPending}>
              {replay.isPending ? "Replaying…" : "Replay"}
            </button>
          </form>
          {replay.isError ? (
            <p className="form__error" role="alert">
              {replay.error.message}
            </p>
          ) : null}
          {replay.isSuccess ? (
            <div className="notice small" role="status" data-testid="replay-result">
              <p>
                {replay.data.accepted > 0
                  ? `Replay #${replay.data.replayId}: ${replay.data.accepted} row(s) queued into version ${replay.data.version}; the next batch applies them.`
                  : "Nothing was queued."}
                {replay.data.refused.length > 0 ? ` ${replay.data.refused.length} refused:` : ""}
                {replay.data.more ? " More rows match: replay again for the next 10,000." : ""}
              </p>
              {replay.data.refused.length > 0 ? (
                <ul>
                  {replay.data.refused.slice(0, 50).map((r) => (
                    <li key={r.id}>
                      #{r.id}: {r.why}
                    </li>
                  ))}
                  {replay.data.refused.length > 50 ? <li>… and {replay.data.refused.length - 50} more (the audit event keeps the first 100)</li> : null}
                </ul>
              ) : null}
            </div>
          ) : null}
        </section>
      ) : null}
      {summary.counts.total > 0 ? <DiscardDeadLetters pipeline={pipeline} /> : null}
    </>
  );
}
