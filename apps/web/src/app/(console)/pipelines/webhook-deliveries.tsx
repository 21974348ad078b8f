"use client";
// Webhook deliveries on the fleet page: per webhook pipeline, the delivery ledger's counts by status,
// the failed deliveries with their last error and, for operators, re-queueing them (all, or one key)
// once the receiver is fixed. The re-queue only changes the ledger; the workers running the pipeline
// send the deliveries again at its next batch turn, so the counts move on their own afterwards.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { TRequeueWebhookDeliveriesResult, TWebhookPipelineSummary } from "@sluice/services";
import { useState } from "react";
import { useTRPC } from "@/trpc/react";
import { WhyDisabled } from "@/components/why-disabled";

const dateTime = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "medium" });
const REFRESH_MS = 5_000;

/** `canRetry`: the signed-in user's role may retry (an owner only for their teams' pipelines: the procedure decides). */
export function WebhookDeliveries({ canRetry }: { canRetry: boolean }) {
  const trpc = useTRPC();
  const summary = useQuery({ ...trpc.webhook.summary.queryOptions(), refetchInterval: REFRESH_MS });

  return (
    <section className="panel" data-testid="webhook-deliveries">
      <h2 className="panel__title">Webhook deliveries</h2>
      <p className="muted small">
        Each result a webhook pipeline sends, once per idempotency key. A delivery the receiver kept refusing
        until its attempts ran out stays <strong>failed</strong>; once the receiver works again, retry it and
        the workers send it again with the same key. A delivered key is never sent twice.
      </p>
      {summary.isPending ? (
        <p className="muted">Loading deliveries…</p>
      ) : summary.isError ? (
        <p className="form__error" role="alert">
          Could not load webhook deliveries: {summary.error.message}
        </p>
      ) : summary.data.length === 0 ? (
        <p className="muted">No webhook deliveries yet.</p>
      ) : (
        summary.data.map((s) => <PipelineDeliveries key={s.pipeline} summary={s} canRetry={canRetry} />)
      )}
    </section>
  );
}

function PipelineDeliveries({ summary, canRetry }: { summary: TWebhookPipelineSummary; canRetry: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { pipeline, counts } = summary;
  const [reason, setReason] = useState("");
  const failed = useQuery({
    ...trpc.webhook.failed.queryOptions({ pipeline }),
    enabled: counts.failed > 0,
    refetchInterval: REFRESH_MS,
  });
  const requeue = useMutation(
    trpc.webhook.requeue.mutationOptions({
      onSettled: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.webhook.pathKey() });
      },
    }),
  );
  const retry = (key?: string) => requeue.mutate({ pipeline, reason, ...(key ? { key } : {}) });
  const notAllowed = canRetry
    ? undefined
    : "Retrying sends to the receiver again: it needs the operator role (or owner, for your teams' pipelines).";

  return (
    <div className="webhook" data-testid={`webhook-${pipeline}`}>
      <div className="webhook__head">
        <span className="strong mono">{pipeline}</span>
        <span className="muted">
          delivered <span data-testid="count-delivered">{counts.delivered}</span> · pending{" "}
          <span data-testid="count-pending">{counts.pending}</span> · failed{" "}
          <span data-testid="count-failed" className={counts.failed > 0 ? "bad" : undefined}>
            {counts.failed}
          </span>
        </span>
      </div>
      {requeue.isSuccess ? (
        <p className="notice" role="status">
          {requeuedMessage(requeue.data)}
        </p>
      ) : null}
      {requeue.isError ? (
        <p className="form__error" role="alert">
          Could not retry: {requeue.error.message}
        </p>
      ) : null}
      {counts.failed > 0 ? (
        <>
          <div className="webhook__actions">
            <label className="form__field webhook__reason">
              Reason (recorded with your name)
              <input
                value={reason}
                onChange={(e) => setReason(e.target.value)}
                maxLength={2000}
                placeholder="e.g. receiver fixed"
              />
            </label>
            <button
              className="button button--primary"
              type="button"
              disabled={!canRetry || requeue.isPending}
              aria-describedby={notAllowed ? `webhook-why-${pipeline}` : undefined}
              onClick={() => retry()}
            >
              Retry all {counts.failed} failed
            </button>
          </div>
          <WhyDisabled id={`webhook-why-${pipeline}`} reason={notAllowed} />
          {failed.isError ? (
            <p className="form__error" role="alert">
              Could not load the failed deliveries: {failed.error.message}
            </p>
          ) : failed.data ? (
            <table className="table" data-testid="failed-deliveries">
              <thead>
                <tr>
                  <th>Idempotency key</th>
                  <th className="num">Attempts</th>
                  <th>Last error</th>
                  <th>Last attempt</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {failed.data.deliveries.map((d) => (
                  <tr key={d.key}>
                    <td className="mono">{d.key}</td>
                    <td className="num">{d.attempts}</td>
                    <td className="small">
                      {d.lastError ?? "—"}
                      {d.lastResponse ? (
                        <div className="mono muted" data-testid="receiver-answer">
                          The receiver said: {d.lastResponse}
                        </div>
                      ) : null}
                    </td>
                    <td className="muted">{d.lastAttemptAt ? dateTime.format(d.lastAttemptAt) : "—"}</td>
                    <td>
                      <button
                        className="button button--small"
                        type="button"
                        disabled={!canRetry || requeue.isPending}
                        aria-describedby={notAllowed ? `webhook-why-${pipeline}` : undefined}
                        onClick={() => retry(d.key)}
                      >
                        Retry
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          {failed.data?.receiverAnswers === "hidden" ? (
            <p className="muted small">{failed.data.receiverAnswersHidden}</p>
          ) : null}
          {failed.data && failed.data.deliveries.length < counts.failed ? (
            <p className="muted small">
              The newest {failed.data.deliveries.length} of {counts.failed};{" "}
              <code>npx sluice webhooks {pipeline} --failed</code> lists them all.
            </p>
          ) : null}
        </>
      ) : null}
    </div>
  );
}

function requeuedMessage(r: TRequeueWebhookDeliveriesResult): string {
  if (r.requeued === 0) return "Nothing to retry: no failed deliveries.";
  const what =
    r.requeued === 1
      ? "1 delivery with its idempotency key"
      : `${r.requeued} deliveries with their idempotency keys`;
  const next = r.runningOnWorkers
    ? "The workers send them at the pipeline's next batch turn."
    : "The pipeline is not running on the workers: they are sent once it runs again.";
  return `Re-queued ${what}. ${next}`;
}
