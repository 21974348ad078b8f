"use client";
// Starting a blue/green rollout from the draft: the new version runs as a candidate (green) beside the
// serving one with its own state and tables, from the topic's earliest offsets, a point in time or
// blue's own starting offsets; blue keeps serving, untouched. Offered for a changed spec of a
// pipeline that has a serving version; the server decides who may (rollout.start, like registering).
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/trpc/react";

type TFrom = "earliest" | "blue" | "timestamp";

export function RolloutStartPanel({
  text,
  name,
  previous,
}: {
  text: string;
  name: string;
  previous: number;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const [from, setFrom] = useState<TFrom>("earliest");
  const [at, setAt] = useState("");
  const [reason, setReason] = useState("");
  const [keepDays, setKeepDays] = useState(7);
  const start = useMutation(
    trpc.rollout.start.mutationOptions({
      onSuccess: () => router.push(`/pipelines/${encodeURIComponent(name)}/rollout`),
    }),
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    start.mutate({
      pipeline: name,
      specText: text,
      reason,
      keepPreviousHours: keepDays * 24,
      from:
        from === "timestamp"
          ? { kind: "timestamp", at: new Date(at) }
          : from === "blue"
            ? { kind: "blue" }
            : { kind: "earliest" },
    });
  };
  return (
    <section className="panel" aria-labelledby="rollout-start-title" data-testid="rollout-start">
      <h2 className="panel__title" id="rollout-start-title">
        Or start a rollout
      </h2>
      <p className="small">
        Runs this draft as a new version (green) beside version {previous} (blue), with fresh state and its
        own tables, until it is reconciled against blue and promoted — with a second person&apos;s approval —
        or aborted. Blue keeps serving and is never stopped by this.
      </p>
      <form onSubmit={submit} className="stack">
        <fieldset className="form__field">
          <legend>Green reads from</legend>
          <label>
            <input
              type="radio"
              name="from"
              checked={from === "earliest"}
              onChange={() => setFrom("earliest")}
            />{" "}
            the topic&apos;s earliest offsets
          </label>{" "}
          <label>
            <input type="radio" name="from" checked={from === "blue"} onChange={() => setFrom("blue")} />{" "}
            where blue started reading
          </label>{" "}
          <label>
            <input
              type="radio"
              name="from"
              checked={from === "timestamp"}
              onChange={() => setFrom("timestamp")}
            />{" "}
            a point in time
          </label>
          {from === "timestamp" ? (
            <input
              type="datetime-local"
              aria-label="Start reading at"
              value={at}
              onChange={(e) => setAt(e.target.value)}
              required
            />
          ) : null}
        </fieldset>
        <p className="muted small">
          Offsets the topic no longer retains are gone: green then starts at the oldest one kept, and the
          rollout says so per partition.
        </p>
        <label className="form__field">
          After a promotion, keep blue&apos;s state and tables for a rollback for (days)
          <input
            type="number"
            name="keep-days"
            min={1}
            max={365}
            value={keepDays}
            onChange={(e) => setKeepDays(Number(e.target.value))}
            required
          />
        </label>
        <label className="form__field">
          Why (the people approving the promotion read it)
          <input
            name="rollout-reason"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            maxLength={2000}
            required
            placeholder="e.g. settle per 10 minutes instead of 5"
          />
        </label>
        <div>
          <button className="button button--primary" type="submit" disabled={start.isPending}>
            {start.isPending ? "Starting…" : "Start the rollout"}
          </button>
        </div>
      </form>
      {start.isError ? (
        <p className="form__error" role="alert" data-testid="rollout-start-error">
          Could not start the rollout: {start.error.message}
        </p>
      ) : null}
    </section>
  );
}
