"use client";
// Writing a pipeline spec in the browser: the editor (pre-filled from the template or the current
// version, or from an uploaded file or the shape form), checked by the server as you type
// (draft.check, debounced), then a dry run on the real topic and registering it.
import { useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { MAX_DRAFT_CHARS } from "@sluice/services/drafts/pure";
import { useEffect, useState, type ChangeEvent } from "react";
import type { AppRouter } from "@/server/trpc/root";
import { useTRPC } from "@/trpc/react";
import { DryRunPanel } from "./dry-run-panel";
import { RegisterPanel } from "./register-panel";
import { ShapeForm } from "./shape-form";
import { SpecEditor } from "./spec-editor";

const CHECK_DEBOUNCE_MS = 400;

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return debounced;
}

export function DraftWorkspace({ pipeline, topic }: { pipeline?: string; topic?: string }) {
  const trpc = useTRPC();
  const start = useQuery({
    ...trpc.draft.start.queryOptions({ ...(pipeline ? { pipeline } : {}), ...(topic ? { topic } : {}) }),
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  const vocabulary = useQuery({ ...trpc.draft.vocabulary.queryOptions(), staleTime: Infinity });
  const [text, setText] = useState<string | null>(null);
  const [origin, setOrigin] = useState<string | null>(null);
  const [showForm, setShowForm] = useState(false);
  const [uploadError, setUploadError] = useState<string | null>(null);

  useEffect(() => {
    if (start.data && text === null) {
      setText(start.data.text);
      setOrigin(start.data.from);
    }
  }, [start.data, text]);

  const draft = useDebounced(text ?? "", CHECK_DEBOUNCE_MS);
  const tooLong = draft.length > MAX_DRAFT_CHARS;
  const check = useQuery({
    ...trpc.draft.check.queryOptions({ text: draft }),
    enabled: text !== null && !tooLong && draft !== "",
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    retry: false,
  });

  if (start.isError)
    return (
      <p className="form__error" role="alert">
        Could not open the draft: {start.error.message}
      </p>
    );
  if (text === null) return <p className="muted">Opening the editor…</p>;

  const upload = async (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    e.target.value = "";
    if (!file) return;
    if (file.size > MAX_DRAFT_CHARS) {
      setUploadError(
        `${file.name} is ${file.size.toLocaleString("en")} bytes; a spec is at most ${MAX_DRAFT_CHARS.toLocaleString("en")} characters: choose the spec file itself.`,
      );
      return;
    }
    setUploadError(null);
    setText(await file.text());
    setOrigin(`the file ${file.name}`);
  };

  const current = check.data;
  const errors = tooLong ? [] : current && !current.ok ? current.errors : [];
  const valid = !tooLong && current?.ok === true && draft === text;

  return (
    <div className="stack">
      <section className="panel">
        <div className="draft-toolbar">
          <span className="muted small" data-testid="draft-origin">
            Started from {origin}.
          </span>
          <label className="button button--small">
            Upload a file
            <input
              type="file"
              accept=".yaml,.yml,.json,text/yaml,application/json"
              onChange={upload}
              hidden
              aria-label="Upload a spec file"
            />
          </label>
          <button
            type="button"
            className="button button--small button--ghost"
            onClick={() => setShowForm((s) => !s)}
            aria-expanded={showForm}
          >
            {showForm ? "Hide the form" : "Write it with a form"}
          </button>
        </div>
        {uploadError ? (
          <p className="form__error" role="alert">
            {uploadError}
          </p>
        ) : null}
        {showForm ? (
          <ShapeForm
            owner={start.data?.text.match(/^owner: (.+)$/m)?.[1]}
            topic={topic}
            onYaml={(yaml) => {
              setText(yaml);
              setOrigin("the form");
            }}
          />
        ) : null}
        <SpecEditor
          value={text}
          onChange={setText}
          errors={errors}
          vocabulary={vocabulary.data}
          contractFields={current?.contractFields ?? []}
        />
        <CheckStatus
          tooLong={tooLong}
          length={draft.length}
          pending={check.isFetching || draft !== text}
          error={check.error?.message}
          result={current}
        />
      </section>
      {valid && current?.ok ? (
        <>
          <DryRunPanel text={text} topic={current.topic} />
          <RegisterPanel text={text} name={current.name} registration={current.registration} />
        </>
      ) : (
        <p className="muted">The dry run and registering open once the spec is valid.</p>
      )}
    </div>
  );
}

type TCheck = inferRouterOutputs<AppRouter>["draft"]["check"];

function CheckStatus({
  tooLong,
  length,
  pending,
  error,
  result,
}: {
  tooLong: boolean;
  length: number;
  pending: boolean;
  error: string | undefined;
  result: TCheck | undefined;
}) {
  if (tooLong) {
    return (
      <p className="form__error" role="alert" data-testid="draft-status">
        The draft is {length.toLocaleString("en")} characters, longer than{" "}
        {MAX_DRAFT_CHARS.toLocaleString("en")}: a spec is a few kilobytes. Paste the spec alone.
      </p>
    );
  }
  if (error)
    return (
      <p className="form__error" role="alert" data-testid="draft-status">
        Could not check the draft: {error}
      </p>
    );
  const r = result;
  if (!r)
    return (
      <p className="muted" data-testid="draft-status">
        Checking…
      </p>
    );
  return (
    <div data-testid="draft-status" aria-live="polite">
      {pending ? <p className="muted small">Checking…</p> : null}
      {r.ok ? (
        <div className="notice" data-testid="draft-valid">
          <strong>Valid.</strong> <span style={{ whiteSpace: "pre-line" }}>{r.registration.message}</span>
          {r.registration.kind === "new-version" && r.registration.needsApproval ? (
            <p className="warn">Needs a change request: {r.registration.needsApproval.join("; ")}</p>
          ) : null}
          {r.notAllowed ? (
            <p className="warn" data-testid="draft-not-allowed">
              You cannot register it: {r.notAllowed}
            </p>
          ) : null}
        </div>
      ) : (
        <>
          <p className="form__error">
            {r.errors.length} {r.errors.length === 1 ? "error" : "errors"} — fix{" "}
            {r.errors.length === 1 ? "it" : "them"} to dry-run and register:
          </p>
          <ul className="draft-errors" data-testid="draft-errors">
            {r.errors.map((e, i) => (
              <li key={i}>
                <span className="mono">
                  {e.line ? `line ${e.line}, column ${e.column}` : "(no position)"}
                </span>{" "}
                <strong className="mono">{e.path || "(spec)"}</strong>: {e.message}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
