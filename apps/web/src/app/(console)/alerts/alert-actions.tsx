"use client";
// Acknowledge, resolve and silence one alert — the same controls on the Alerts page and a pipeline's
// page. Enabled for roles that may respond (operators; owners for their teams' pipelines: the server
// decides per pipeline and says why when it refuses); a viewer sees them disabled, with why.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { TAlertView } from "@sluice/services";
import { useState } from "react";
import { useTRPC } from "@/trpc/react";
import { WhyDisabled } from "@/components/why-disabled";

const SILENCE_FOR = [
  { label: "1 hour", ms: 3600_000 },
  { label: "4 hours", ms: 4 * 3600_000 },
  { label: "1 day", ms: 24 * 3600_000 },
  { label: "7 days", ms: 7 * 24 * 3600_000 },
];
export const NOT_ALLOWED =
  "Responding to alerts needs the operator role (or owner, for your teams' pipelines). Ask an admin.";

export function useAlertMutations() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const onSettled = async () => {
    await queryClient.invalidateQueries({ queryKey: trpc.alert.pathKey() });
  };
  return {
    acknowledge: useMutation(trpc.alert.acknowledge.mutationOptions({ onSettled })),
    resolve: useMutation(trpc.alert.resolve.mutationOptions({ onSettled })),
    silence: useMutation(trpc.alert.silence.mutationOptions({ onSettled })),
    unsilence: useMutation(trpc.alert.unsilence.mutationOptions({ onSettled })),
  };
}

export function AlertActions({ alert, canRespond }: { alert: TAlertView; canRespond: boolean }) {
  const m = useAlertMutations();
  const [note, setNote] = useState("");
  const [silenceFor, setSilenceFor] = useState(SILENCE_FOR[0]!.ms);
  const [reason, setReason] = useState("");
  if (alert.state === "resolved") return null;
  const whyId = canRespond ? undefined : `alert-why-${alert.id}`;
  const ref = { episodeId: alert.id, pipeline: alert.pipeline };
  const error = m.acknowledge.error ?? m.resolve.error ?? m.silence.error;
  return (
    <div className="alert-actions" data-testid={`alert-actions-${alert.id}`}>
      <input
        type="text"
        placeholder="Note (optional)"
        value={note}
        onChange={(e) => setNote(e.target.value)}
        aria-label="Note"
        disabled={!canRespond}
      />
      {alert.state === "firing" ? (
        <button
          type="button"
          className="button button--small"
          disabled={!canRespond || m.acknowledge.isPending}
          aria-describedby={whyId}
          onClick={() => m.acknowledge.mutate({ ...ref, note })}
        >
          Acknowledge
        </button>
      ) : null}
      <button
        type="button"
        className="button button--small"
        disabled={!canRespond || m.resolve.isPending}
        aria-describedby={whyId}
        onClick={() => m.resolve.mutate({ ...ref, note })}
      >
        Resolve
      </button>
      <span className="alert-actions__silence">
        <select
          value={silenceFor}
          onChange={(e) => setSilenceFor(Number(e.target.value))}
          aria-label="Silence for"
          disabled={!canRespond}
        >
          {SILENCE_FOR.map((s) => (
            <option key={s.ms} value={s.ms}>
              {s.label}
            </option>
          ))}
        </select>
        <input
          type="text"
          placeholder="Why silence?"
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          aria-label="Silence reason"
          disabled={!canRespond}
        />
        <button
          type="button"
          className="button button--small"
          disabled={!canRespond || m.silence.isPending}
          aria-describedby={whyId}
          onClick={() =>
            m.silence.mutate({
              pipeline: alert.pipeline,
              ...(alert.pipeline ? {} : { kind: alert.kind }),
              expiresAt: new Date(Date.now() + silenceFor),
              reason,
            })
          }
        >
          Silence {alert.pipeline ? "pipeline" : "rule"}
        </button>
      </span>
      <WhyDisabled id={`alert-why-${alert.id}`} reason={canRespond ? null : NOT_ALLOWED} />
      {error ? (
        <p className="form__error" role="alert">
          {error.message}
        </p>
      ) : null}
    </div>
  );
}
