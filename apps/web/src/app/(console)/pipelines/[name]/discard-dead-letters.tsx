"use client";
// Discard dead letters that will never be replayed: by outcome, text in the reason, partition or text
// in the payload, with a reason. The rows stay in dead_letters; the discard is recorded once per row.
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/trpc/react";

type TOutcome = "" | "dead_letter" | "quarantined" | "late";

export function DiscardDeadLetters({ pipeline }: { pipeline: string }) {
  const trpc = useTRPC();
  const may = useQuery(trpc.pipeline.may.queryOptions({ pipeline }));
  const [outcome, setOutcome] = useState<TOutcome>("dead_letter");
  const [reasonContains, setReasonContains] = useState("");
  const [text, setText] = useState("");
  const [reason, setReason] = useState("");
  const discard = useMutation(trpc.deadLetter.discard.mutationOptions());
  const allowed = may.data?.["deadletter.discard"];
  if (!allowed?.ok) return null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    discard.mutate({ pipeline, reason, ...(outcome ? { outcome } : {}), ...(reasonContains ? { reasonContains } : {}), ...(text ? { text } : {}) });
  };
  return (
    <section className="panel stack" data-testid="discard-dead-letters">
      <h3 className="section-title">Discard dead letters</h3>
      <p className="muted small">For rows that will never be replayed (e.g. a producer bug since fixed). They stay in the table for the record; who discarded them, when and why is kept with each row and in the audit log.</p>
      <form className="filters" onSubmit={submit} aria-label="Discard dead letters">
        <label>
          Outcome{" "}
          <select value={outcome} onChange={(e) => setOutcome(e.target.value as TOutcome)}>
            <option value="dead_letter">dead letter</option>
            <option value="quarantined">quarantined</option>
            <option value="late">late</option>
            <option value="">any</option>
          </select>
        </label>
        <label>
          Reason contains <input value={reasonContains} onChange={(e) => setReasonContains(e.target.value)} placeholder="e.g. not valid JSON" />
        </label>
        <label>
          Payload contains <input value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <label>
          Why <input value={reason} onChange={(e) => setReason(e.target.value)} required maxLength={2000} placeholder="recorded with your name" />
        </label>
        <button className="button button--small" type="submit" disabled={discard.isPending}>
          Discard matching rows
        </button>
      </form>
      {discard.isError ? (
        <p className="form__error" role="alert">
          {discard.error.message}
        </p>
      ) : null}
      {discard.isSuccess ? (
        <p className="notice small" role="status">
          Discarded {discard.data.discarded} row(s){discard.data.alreadyResolved ? `; ${discard.data.alreadyResolved} were discarded before` : ""}
          {discard.data.more ? "; more rows match: discard again for the next 10,000" : ""}.
        </p>
      ) : null}
    </section>
  );
}
