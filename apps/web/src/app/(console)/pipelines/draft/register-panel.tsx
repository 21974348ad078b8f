"use client";
// Registering the draft: the registration rules the CLI uses (continue the previous version's state,
// or a refusal with the reasons; fresh state only when ticked), with why — kept with the version and
// in the audit log. Once registered, it can be started here. A breaking contract change is refused
// with NEEDS_APPROVAL; "Request approval" then raises a schema change request from the same draft,
// which an operator approves on the Change requests page (it is applied at a batch boundary).
import { useMutation } from "@tanstack/react-query";
import type { TDraftRegistration } from "@sluice/services";
import Link from "next/link";
import { useState } from "react";
import { useTRPC } from "@/trpc/react";

export function RegisterPanel({
  text,
  name,
  registration,
}: {
  text: string;
  name: string;
  registration: TDraftRegistration;
}) {
  const trpc = useTRPC();
  const [reason, setReason] = useState("");
  const [freshState, setFreshState] = useState(false);
  const submit = useMutation(trpc.draft.submit.mutationOptions());
  const start = useMutation(trpc.run.command.mutationOptions());
  const requestChange = useMutation(trpc.change.requestSchemaChange.mutationOptions());
  const done = submit.data;
  const needsApproval =
    (registration.kind === "new-version" && registration.needsApproval !== null) ||
    submit.error?.data?.code === "FORBIDDEN";

  return (
    <section className="panel" aria-labelledby="register-title" data-testid="register">
      <h2 className="panel__title" id="register-title">
        Register {name}
      </h2>
      {done ? (
        <div className="stack">
          <p className="notice" role="status" data-testid="registered">
            Registered <strong>{done.name}</strong> version {done.version}
            {done.continuedFrom
              ? `, continuing version ${done.continuedFrom}'s checkpoint and state`
              : done.fresh
                ? ", with fresh state"
                : ""}
            .{done.notes.length > 0 ? ` Note: ${done.notes.join("; ")}` : ""}
            {done.replaced
              ? ` Version ${done.replaced} is superseded: its runs stop, so start version ${done.version} to go on${done.continuedFrom ? " from its checkpoint" : ""}.`
              : ""}
            {done.fresh && !done.replaced && done.version > 1 ? (
              <>
                {" "}
                Version {done.version - 1} keeps its own state and table: if it runs, it keeps running beside
                this one (the fleet shows both) —{" "}
                <Link href={`/pipelines/${encodeURIComponent(done.name)}?v=${done.version - 1}`}>
                  its page
                </Link>{" "}
                stops it.
              </>
            ) : null}
          </p>
          <div className="draft-toolbar">
            <button
              type="button"
              className="button button--primary"
              disabled={start.isPending || start.isSuccess}
              onClick={() =>
                start.mutate({
                  pipeline: done.name,
                  version: done.version,
                  command: "start",
                  reason: reason || `version ${done.version} registered in the console`,
                })
              }
            >
              {start.isSuccess ? `Version ${done.version} started` : `Start version ${done.version}`}
            </button>
            <Link href={`/pipelines/${encodeURIComponent(done.name)}?v=${done.version}`}>Open its page</Link>
          </div>
          {start.isError ? (
            <p className="form__error" role="alert">
              {start.error.message}
            </p>
          ) : null}
          {start.isSuccess ? (
            <p className="muted" data-testid="started">
              {start.data.phase === "running" || start.data.changed
                ? "Started: the workers pick it up within seconds."
                : `Already ${start.data.phase}.`}
            </p>
          ) : null}
        </div>
      ) : (
        <form
          className="form"
          onSubmit={(e) => {
            e.preventDefault();
            submit.mutate({ text, reason, freshState });
          }}
        >
          <p className="muted small" style={{ whiteSpace: "pre-line" }}>
            {registration.message}
          </p>
          <label className="form__field">
            <span>Why (kept with the version and in the audit log)</span>
            <input
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              placeholder="e.g. first version of the refunds ledger"
              aria-label="Why"
            />
          </label>
          <label className="admin-form__check">
            <input type="checkbox" checked={freshState} onChange={(e) => setFreshState(e.target.checked)} />{" "}
            Register with fresh state (start from source.kafka.startingOffsets with empty state instead of
            continuing the previous version&apos;s)
          </label>
          <button
            type="submit"
            className="button button--primary"
            disabled={
              submit.isPending || registration.kind === "unchanged" || registration.kind === "refused"
            }
          >
            {submit.isPending ? "Registering…" : "Register"}
          </button>
          {submit.isError ? (
            <p
              className="form__error"
              role="alert"
              data-testid="register-error"
              style={{ whiteSpace: "pre-line" }}
            >
              {submit.error.message}
            </p>
          ) : null}
          {needsApproval ? (
            <div className="stack" data-testid="request-approval">
              <button
                type="button"
                className="button"
                disabled={requestChange.isPending || requestChange.isSuccess || !reason.trim()}
                onClick={() => requestChange.mutate({ pipeline: name, specText: text, reason })}
              >
                {requestChange.isPending ? "Requesting…" : "Request approval"}
              </button>
              {!reason.trim() && !requestChange.isSuccess ? (
                <p className="muted small">Say why above: the approver reads it.</p>
              ) : null}
              {requestChange.isSuccess ? (
                <p className="notice" role="status" data-testid="schema-change-requested">
                  Schema change request #{requestChange.data.id} raised: an operator approves it on{" "}
                  <Link href="/change-requests">Change requests</Link>, and the new version is registered
                  then, continuing from the same offsets.
                </p>
              ) : null}
              {requestChange.isError ? (
                <p className="form__error" role="alert">
                  {requestChange.error.message}
                </p>
              ) : null}
            </div>
          ) : null}
        </form>
      )}
    </section>
  );
}
