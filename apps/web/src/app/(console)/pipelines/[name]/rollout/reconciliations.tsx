"use client";
// Every output's newest reconciliation, and **Reconcile now** (rollout.reconcile) for whoever may act
// on the pipeline: the workers reconcile a running rollout every minute on their own, this is for
// reading the result right after green caught up or after a fix.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { TRolloutPage } from "@sluice/services";
import { WhyDisabled } from "@/components/why-disabled";
import { useTRPC } from "@/trpc/react";
import { ReconciliationPanel } from "./reconciliation-panel";

export function Reconciliations({ rollout: r }: { rollout: TRolloutPage }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const pipeline = r.rollout.pipeline;
  const may = useQuery(trpc.pipeline.may.queryOptions({ pipeline }));
  const reconcile = useMutation(
    trpc.rollout.reconcile.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.rollout.pathKey() }),
    }),
  );
  if (r.rollout.state !== "running" && r.reconciliations.length === 0) return null;
  const allowed = may.data?.["pipeline.lifecycle"];
  const refusal =
    allowed && !allowed.ok
      ? allowed.message
      : r.rollout.state !== "running"
        ? "Only a running rollout is reconciled."
        : undefined;
  const action = (
    <div className="lifecycle">
      <button
        type="button"
        className="button button--small"
        disabled={!may.data || refusal !== undefined || reconcile.isPending}
        aria-describedby={refusal ? "reconcile-why" : undefined}
        onClick={() => reconcile.mutate({ pipeline })}
      >
        {reconcile.isPending ? "Reconciling…" : "Reconcile now"}
      </button>
      <WhyDisabled id="reconcile-why" reason={refusal} />
      {reconcile.isError ? (
        <p className="form__error small" role="alert">
          Could not reconcile: {reconcile.error.message}
        </p>
      ) : null}
    </div>
  );
  if (r.reconciliations.length === 0)
    return (
      <section className="panel" data-testid="reconciliation">
        <h2>Reconciliation</h2>
        <p className="muted">
          Not run yet: the workers reconcile a running rollout every minute; what both versions have committed
          is compared once each has committed a batch.
        </p>
        {action}
      </section>
    );
  return (
    <>
      {r.reconciliations.map((rec, i) => (
        <ReconciliationPanel key={rec.output} reconciliation={rec} action={i === 0 ? action : undefined} />
      ))}
    </>
  );
}
