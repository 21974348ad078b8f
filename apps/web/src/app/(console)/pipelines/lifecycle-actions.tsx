"use client";
// Start, pause, resume, stop and restart in the pipeline page's header, on the version the page shows
// (`?v=N`, else the serving one) and never another: the buttons follow that version's run phase, the
// dialog names it, and the command carries its number. Each asks for a reason (kept in the run history
// and the audit log with the signed-in user) and the page shows the new phase at once: the run state
// is refetched as soon as the command returns. The server decides who may (pipeline.may only enables
// the buttons); which commands are offered follows the run-state machine.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { TRunCommand, TRunPhase } from "@sluice/services";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/trpc/react";
import { WhyDisabled } from "@/components/why-disabled";

/** Commands that apply from each phase (packages/services/src/runs/run-state.ts decides on the server). */
const OFFERED: Record<TRunPhase | "none", TRunCommand[]> = {
  none: ["start"],
  running: ["pause", "stop"],
  pausing: ["resume", "stop"],
  stopping: ["start"],
  paused: ["resume", "stop"],
  stopped: ["start"],
  failed: ["restart", "stop"],
};
const LABEL: Record<TRunCommand, string> = {
  start: "Start",
  pause: "Pause",
  resume: "Resume",
  stop: "Stop",
  restart: "Restart",
};
const EXPLAIN: Record<TRunCommand, string> = {
  start: "The workers run it from its checkpoint.",
  pause: "The batch in flight commits, then no new batch starts until it is resumed.",
  resume: "The workers continue from the checkpoint.",
  stop: "The batch in flight commits, then it stops; start continues from the checkpoint.",
  restart: "The failed batch re-runs over the same offsets.",
};

export function LifecycleActions({ pipeline, version }: { pipeline: string; version: number }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const detail = useQuery(trpc.pipeline.get.queryOptions({ pipeline, version }));
  const may = useQuery(trpc.pipeline.may.queryOptions({ pipeline }));
  const [command, setCommand] = useState<TRunCommand | null>(null);
  const [reason, setReason] = useState("");
  const run = useMutation(
    trpc.run.command.mutationOptions({
      onSuccess: () => {
        setCommand(null);
        setReason("");
      },
      onSettled: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.pipeline.pathKey() });
        await queryClient.invalidateQueries({ queryKey: trpc.audit.pathKey() });
      },
    }),
  );
  const shown = detail.data?.version;
  if (!detail.data || !shown || shown.version !== version) return null;
  const allowed = may.data?.["pipeline.lifecycle"];
  // A superseded version can only be stopped: the server refuses anything that would run it again.
  const offered = OFFERED[detail.data.run?.phase ?? "none"].filter(
    (c) => shown.supersededBy === null || c === "stop",
  );
  const refusal = allowed && !allowed.ok ? allowed.message : undefined;
  const whyId = `lifecycle-why-${pipeline}-${version}`;
  const which = `${pipeline} version ${version}`;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (command) run.mutate({ pipeline, version, command, reason });
  };

  return (
    <div className="lifecycle" data-testid="lifecycle-actions">
      <div className="lifecycle__buttons">
        {offered.map((c) => (
          <button
            key={c}
            type="button"
            className={c === command ? "button button--small button--primary" : "button button--small"}
            disabled={!allowed?.ok || run.isPending}
            aria-describedby={refusal ? whyId : undefined}
            onClick={() => {
              setCommand(c);
              run.reset();
            }}
          >
            {LABEL[c]}
          </button>
        ))}
      </div>
      <WhyDisabled id={whyId} reason={refusal} />
      {command ? (
        <form className="lifecycle__form panel" onSubmit={submit} aria-label={`${LABEL[command]} ${which}`}>
          <p className="small">
            <strong>
              {LABEL[command]} {which}
              {shown.serving ? " (serving)" : " (not the serving version)"}.
            </strong>{" "}
            {EXPLAIN[command]} Other versions are not touched.
          </p>
          <label className="form__field">
            Reason (recorded with your name)
            <input
              name="reason"
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              maxLength={2000}
              required
              placeholder="e.g. upstream maintenance until 14:00"
              autoFocus
            />
          </label>
          <div className="lifecycle__buttons">
            <button className="button button--primary button--small" type="submit" disabled={run.isPending}>
              {run.isPending ? "Sending…" : `${LABEL[command]} now`}
            </button>
            <button
              className="button button--ghost button--small"
              type="button"
              onClick={() => setCommand(null)}
            >
              Cancel
            </button>
          </div>
        </form>
      ) : null}
      {run.isError ? (
        <p className="form__error" role="alert">
          Could not {run.variables?.command ?? "do that"}: {run.error.message}
        </p>
      ) : null}
      {run.isSuccess ? (
        <p className="notice small" role="status">
          {run.data.changed
            ? `${LABEL[run.variables.command]}: version ${run.data.version} is now ${run.data.phase}.`
            : `Nothing to do: version ${run.data.version} is already ${run.data.phase}.`}
        </p>
      ) : null}
      {refusal ? <p className="muted small">{refusal}</p> : null}
    </div>
  );
}
