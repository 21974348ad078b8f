"use client";
// Every version of the pipeline — who registered it, when, why, which state it started from — and a
// side-by-side diff between any two (draft.diff: @sluice/pipeline-spec diffSpecs and stateCompatibility).
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useTRPC } from "@/trpc/react";
import { Time } from "@/components/time";

const show = (v: unknown) => (v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v));

export function VersionHistory({ name }: { name: string }) {
  const trpc = useTRPC();
  const history = useQuery({
    ...trpc.draft.history.queryOptions({ pipeline: name }),
    refetchInterval: 15_000,
  });
  const versions = history.data ?? [];
  const [pair, setPair] = useState<{ from: number; to: number } | null>(null);
  const chosen =
    pair ?? (versions.length >= 2 ? { from: versions[1]!.version, to: versions[0]!.version } : null);
  const diff = useQuery({
    ...trpc.draft.diff.queryOptions({ pipeline: name, from: chosen?.from ?? 1, to: chosen?.to ?? 1 }),
    enabled: chosen !== null && chosen.from !== chosen.to,
  });

  return (
    <section className="panel" aria-labelledby="history-title" data-testid="version-history">
      <div className="draft-toolbar">
        <h2 className="panel__title" id="history-title">
          Version history
        </h2>
        <Link className="button button--small" href={`/pipelines/${encodeURIComponent(name)}/edit`}>
          New version
        </Link>
      </div>
      {history.isError ? (
        <p className="form__error" role="alert">
          Could not load the history: {history.error.message}
        </p>
      ) : null}
      <table className="table table--compact" data-testid="history-table">
        <thead>
          <tr>
            <th>version</th>
            <th>registered</th>
            <th>by</th>
            <th>why</th>
            <th>state</th>
            <th>superseded by</th>
          </tr>
        </thead>
        <tbody>
          {versions.map((v) => (
            <tr key={v.version}>
              <td className="num">{v.version}</td>
              <td>
                <Time value={v.createdAt} />
              </td>
              <td className="mono small">{v.registeredBy ?? "not recorded"}</td>
              <td>{v.reason || <span className="muted">—</span>}</td>
              <td className="small">{v.state}</td>
              <td className="num">{v.supersededBy ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {versions.length < 2 ? (
        <p className="muted">One version so far: register a new version to compare two.</p>
      ) : (
        <div className="stack">
          <div className="draft-toolbar">
            <span>Compare version</span>
            <select
              aria-label="Compare from"
              value={chosen!.from}
              onChange={(e) => setPair({ from: Number(e.target.value), to: chosen!.to })}
            >
              {versions.map((v) => (
                <option key={v.version} value={v.version}>
                  {v.version}
                </option>
              ))}
            </select>
            <span>with version</span>
            <select
              aria-label="Compare to"
              value={chosen!.to}
              onChange={(e) => setPair({ from: chosen!.from, to: Number(e.target.value) })}
            >
              {versions.map((v) => (
                <option key={v.version} value={v.version}>
                  {v.version}
                </option>
              ))}
            </select>
          </div>
          {diff.data ? (
            <>
              <p className={diff.data.stateCompatible ? "muted" : "warn"} data-testid="diff-state">
                {diff.data.stateCompatible
                  ? `Version ${diff.data.to} can continue version ${diff.data.from}'s state.`
                  : `Version ${diff.data.to} cannot continue version ${diff.data.from}'s state.`}
                {diff.data.stateFindings.length > 0 ? ` ${diff.data.stateFindings.join("; ")}` : ""}
              </p>
              <table className="table table--compact" data-testid="diff-table">
                <thead>
                  <tr>
                    <th>field</th>
                    <th>version {diff.data.from}</th>
                    <th>version {diff.data.to}</th>
                  </tr>
                </thead>
                <tbody>
                  {diff.data.changes.length === 0 ? (
                    <tr>
                      <td colSpan={3} className="muted">
                        The two specs are the same.
                      </td>
                    </tr>
                  ) : (
                    diff.data.changes.map((c) => (
                      <tr key={c.path} data-kind={c.kind}>
                        <th scope="row" className="mono">
                          {c.path}
                        </th>
                        <td className="mono small diff-before">
                          {c.kind === "added" ? <span className="muted">(absent)</span> : show(c.before)}
                        </td>
                        <td className="mono small diff-after">
                          {c.kind === "removed" ? <span className="muted">(removed)</span> : show(c.after)}
                        </td>
                      </tr>
                    ))
                  )}
                </tbody>
              </table>
              <SideBySide
                from={versions.find((v) => v.version === diff.data.from)?.specYaml ?? ""}
                to={versions.find((v) => v.version === diff.data.to)?.specYaml ?? ""}
              />
            </>
          ) : null}
        </div>
      )}
    </section>
  );
}

/** Both specs, line by line; lines only in one side are marked. */
function SideBySide({ from, to }: { from: string; to: string }) {
  const a = from.split("\n");
  const b = to.split("\n");
  const inA = new Set(a);
  const inB = new Set(b);
  return (
    <div className="diff-sides" data-testid="diff-sides">
      <pre className="mono small">
        {a.map((l, i) => (
          <div key={i} className={inB.has(l) ? "" : "diff-del"}>
            {l || " "}
          </div>
        ))}
      </pre>
      <pre className="mono small">
        {b.map((l, i) => (
          <div key={i} className={inA.has(l) ? "" : "diff-add"}>
            {l || " "}
          </div>
        ))}
      </pre>
    </div>
  );
}
