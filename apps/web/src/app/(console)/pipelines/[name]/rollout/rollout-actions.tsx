"use client";
// The rollout's next step, each with a reason recorded with the signed-in user: while it runs, ask
// for promotion (a change request someone else approves on Change requests) or abort it (green and
// its state dropped, blue untouched); once promoted, roll back (blue serves again from its own
// checkpoint). The server decides who may and when (rollout.*); a disabled button says why beside it.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { TRolloutPage } from "@sluice/services";
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { WhyDisabled } from "@/components/why-disabled";
import { useTRPC } from "@/trpc/react";

type TStep = "requestPromotion" | "abort" | "rollback";

const LABEL: Record<TStep, string> = {
  requestPromotion: "Request promotion",
  abort: "Abort",
  rollback: "Roll back",
};

function explain(step: TStep, r: TRolloutPage): string {
  const b = `v${r.blue.version}`;
  const g = `v${r.green.version}`;
  if (step === "requestPromotion")
    return `Asks another person to approve making ${g} serve: readers of the serving name switch from ${b}'s tables to ${g}'s at once, and ${b} stops (its state and tables are kept for a rollback).`;
  if (step === "abort")
    return `${g} stops for good; its state and tables are dropped. ${b} keeps serving, untouched.`;
  return `${b} serves again, resuming from its own checkpoint; ${g} stops (its state and tables are kept).`;
}

/** Why a step cannot be taken now (beyond permission), or undefined. */
function notNow(step: TStep, r: TRolloutPage): string | undefined {
  if (step === "rollback" && r.rollout.previousDroppedAt)
    return `Version ${r.blue.version}'s state and tables were dropped after ${r.rollout.keepPreviousHours} hours: it cannot serve again. Start a rollout of its spec instead.`;
  if (step !== "requestPromotion") return undefined;
  if (r.phase === "promotion_requested")
    return `Promotion is already requested: change request #${String(r.promotion?.id)} waits for someone else's approval.`;
  // Differences can be promoted once a person has read them (the form asks): see explain().
  if (r.phase !== "ready" && r.phase !== "differences")
    return `Not ready to promote: ${r.label}. Promotion needs green caught up and a completed reconciliation.`;
  return undefined;
}

export function RolloutActions({ rollout: r }: { rollout: TRolloutPage }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const pipeline = r.rollout.pipeline;
  const may = useQuery(trpc.pipeline.may.queryOptions({ pipeline }));
  const [step, setStep] = useState<TStep | null>(null);
  const [reason, setReason] = useState("");
  const [acceptDifferences, setAcceptDifferences] = useState(false);
  const done = {
    onSuccess: () => {
      setStep(null);
      setReason("");
    },
    onSettled: async () => {
      await queryClient.invalidateQueries({ queryKey: trpc.rollout.pathKey() });
      await queryClient.invalidateQueries({ queryKey: trpc.change.pathKey() });
    },
  };
  const promote = useMutation(trpc.rollout.requestPromotion.mutationOptions(done));
  const abort = useMutation(trpc.rollout.abort.mutationOptions(done));
  const rollback = useMutation(trpc.rollout.rollback.mutationOptions(done));
  const mutation = { requestPromotion: promote, abort, rollback };

  const offered: TStep[] =
    r.rollout.state === "running"
      ? ["requestPromotion", "abort"]
      : r.rollout.state === "promoted"
        ? ["rollback"]
        : [];
  if (offered.length === 0)
    return (
      <p className="small muted" data-testid="rollout-actions">
        This rollout is over. Start another from the{" "}
        <Link href={`/pipelines/${encodeURIComponent(pipeline)}/edit`}>edit page</Link>.
      </p>
    );
  const action = (s: TStep) => (s === "requestPromotion" ? "change.request" : "pipeline.lifecycle");
  const refusal = (s: TStep) => {
    const allowed = may.data?.[action(s)];
    if (allowed && !allowed.ok) return allowed.message;
    return notNow(s, r);
  };
  const pending = promote.isPending || abort.isPending || rollback.isPending;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (step === "requestPromotion") promote.mutate({ pipeline, reason, acceptDifferences });
    else if (step) mutation[step].mutate({ pipeline, reason });
  };
  const failed = offered.map((s) => [s, mutation[s]] as const).find(([, m]) => m.isError);

  return (
    <div className="lifecycle" data-testid="rollout-actions">
      <div className="lifecycle__buttons">
        {offered.map((s) => (
          <span key={s}>
            <button
              type="button"
              className={s === step ? "button button--small button--primary" : "button button--small"}
              disabled={!may.data || refusal(s) !== undefined || pending}
              aria-describedby={refusal(s) ? `rollout-why-${s}` : undefined}
              onClick={() => {
                setStep(s);
                mutation[s].reset();
              }}
            >
              {LABEL[s]}
            </button>
          </span>
        ))}
      </div>
      {offered.map((s) => (
        <WhyDisabled key={s} id={`rollout-why-${s}`} reason={refusal(s)} />
      ))}
      {step ? (
        <form className="lifecycle__form panel" onSubmit={submit} aria-label={`${LABEL[step]} ${pipeline}`}>
          <p className="small">
            <strong>
              {LABEL[step]}: {pipeline} rollout #{String(r.rollout.id)}.
            </strong>{" "}
            {explain(step, r)}
          </p>
          <label className="form__field">
            Reason (recorded with your name)
            <input
              name="reason"
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              maxLength={2000}
              required
              autoFocus
              placeholder="e.g. reconciliation clean over 6 hours of windows"
            />
          </label>
          {step === "requestPromotion" && r.phase === "differences" ? (
            <label className="small">
              <input
                type="checkbox"
                checked={acceptDifferences}
                onChange={(e) => setAcceptDifferences(e.target.checked)}
                required
              />{" "}
              I have read the differences below and what explains them ({r.label}); promote anyway. The
              request says so to its approver.
            </label>
          ) : null}
          <div className="lifecycle__buttons">
            <button className="button button--primary button--small" type="submit" disabled={pending}>
              {pending ? "Sending…" : `${LABEL[step]} now`}
            </button>
            <button
              className="button button--ghost button--small"
              type="button"
              onClick={() => setStep(null)}
            >
              Cancel
            </button>
          </div>
        </form>
      ) : null}
      {failed ? (
        <p className="form__error" role="alert">
          Could not {LABEL[failed[0]].toLowerCase()}: {failed[1].error?.message}
        </p>
      ) : null}
      {promote.isSuccess ? (
        <p className="notice small" role="status">
          Change request #{String(promote.data.id)} asks for the promotion: someone else approves it on{" "}
          <Link href="/change-requests">Change requests</Link>.
        </p>
      ) : null}
      {rollback.isSuccess ? (
        <p className="notice small" role="status">
          Rolled back: v{rollback.data.blue.version} serves again.
        </p>
      ) : null}
      {abort.isSuccess ? (
        <p className="notice small" role="status">
          Aborted: v{r.green.version} stopped for good and its tables dropped.
        </p>
      ) : null}
    </div>
  );
}
