"use client";
// The dry run: a bounded sample of the draft's real topic (the last N records of each partition, or
// a time range) through the same engine code as a real batch, row by row — and nothing written.
import { useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { MAX_SAMPLE_PER_PARTITION } from "@sluice/services/drafts/pure";
import { useState } from "react";
import type { AppRouter } from "@/server/trpc/root";
import { useTRPC } from "@/trpc/react";
import { OUTCOME_COLUMNS, outcomeEntries, outcomeOfColumn, type TOutcomeTone } from "@/lib/outcome-labels";

const BADGE_OF_TONE: Record<TOutcomeTone, string> = {
  ok: "badge--ok",
  idle: "badge--idle",
  warn: "badge--bad",
};

type TSample =
  { kind: "last"; perPartition: number } | { kind: "range"; from: Date; to: Date; perPartition: number };

export function DryRunPanel({ text, topic }: { text: string; topic: string }) {
  const trpc = useTRPC();
  const [kind, setKind] = useState<"last" | "range">("last");
  const [perPartition, setPerPartition] = useState(100);
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [request, setRequest] = useState<{ text: string; sample: TSample } | null>(null);
  const run = useQuery({
    ...trpc.draft.dryRun.queryOptions(request ?? { text, sample: { kind: "last", perPartition: 1 } }),
    enabled: request !== null,
    retry: false,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  const stale = request !== null && request.text !== text;

  const go = () => {
    const sample: TSample =
      kind === "last"
        ? { kind, perPartition }
        : { kind, from: new Date(from), to: new Date(to), perPartition };
    setRequest({ text, sample });
  };

  return (
    <section className="panel" aria-labelledby="dry-run-title" data-testid="dry-run">
      <h2 className="panel__title" id="dry-run-title">
        Dry run on {topic}
      </h2>
      <p className="muted small">
        Reads a sample of the real topic and runs it through the same engine code as a batch — decode,
        contract, expectations, filter, late data, dedup, windows — without committing anything: no
        checkpoint, state, dead letters or sink rows are written, no webhook is called and no offsets are
        committed to Kafka. Duplicates are duplicates within the sample.
      </p>
      <div className="draft-toolbar">
        <label>
          <input type="radio" name="sample" checked={kind === "last"} onChange={() => setKind("last")} /> the
          last
        </label>
        <label className="form__field">
          <span className="muted small">
            records per partition (at most {MAX_SAMPLE_PER_PARTITION.toLocaleString("en")})
          </span>
          <input
            type="number"
            min={1}
            value={perPartition}
            onChange={(e) => setPerPartition(Number(e.target.value))}
            aria-label="Records per partition"
          />
        </label>
        <label>
          <input type="radio" name="sample" checked={kind === "range"} onChange={() => setKind("range")} /> or
          a time range
        </label>
        <input
          type="datetime-local"
          value={from}
          onChange={(e) => setFrom(e.target.value)}
          aria-label="From"
          disabled={kind !== "range"}
        />
        <input
          type="datetime-local"
          value={to}
          onChange={(e) => setTo(e.target.value)}
          aria-label="To"
          disabled={kind !== "range"}
        />
        <button
          type="button"
          className="button button--primary"
          onClick={go}
          disabled={run.isFetching || (kind === "range" && (!from || !to))}
        >
          {run.isFetching ? "Running…" : "Dry run"}
        </button>
      </div>
      {run.isFetching ? (
        <p className="muted" role="status">
          Reading the sample and running it…
        </p>
      ) : null}
      {run.isError ? (
        <p className="form__error" role="alert" data-testid="dry-run-error">
          {run.error.message}
        </p>
      ) : null}
      {run.data && !run.isFetching ? <DryRunResult result={run.data} stale={stale} /> : null}
    </section>
  );
}

type TResult = inferRouterOutputs<AppRouter>["draft"]["dryRun"];

function DryRunResult({ result, stale }: { result: TResult; stale: boolean }) {
  const [only, setOnly] = useState<string>("");
  const o = result.outcomes;
  const totals = outcomeEntries(o);
  const columns = [...new Set(result.result.rows.slice(0, 50).flatMap((r) => Object.keys(r)))];
  return (
    <div className="stack" data-testid="dry-run-result">
      <p className="notice" data-testid="dry-run-nothing-written">
        <strong>Nothing was written.</strong> {result.inputRows} records read from {result.topic} (
        {result.ranges.map((r) => `partition ${r.partition}: ${r.from}–${r.to}`).join(", ")}) in{" "}
        {result.tookMs} ms.
        {result.truncatedPartitions.length > 0
          ? ` Partitions ${result.truncatedPartitions.join(", ")} held more in the range; only the first records were read.`
          : ""}
        {stale ? " The draft changed since: run it again to see the current spec." : ""}
      </p>
      {result.failures.length > 0 ? (
        <p className="form__error" role="alert">
          A real batch over these records would stop:{" "}
          {result.failures
            .map((f) => `expectation "${f.rule}" (fail) is violated by ${f.rowCount} row(s)`)
            .join("; ")}{" "}
          — nothing would be committed.
        </p>
      ) : null}
      <table className="table table--compact" data-testid="dry-run-totals">
        <caption className="muted small">Outcome totals (every input row has exactly one)</caption>
        <tbody>
          {totals.map((e) => (
            <tr key={e.key}>
              <th scope="row">{e.label}</th>
              <td className="num">{e.n}</td>
            </tr>
          ))}
          {Object.entries(result.warnings).map(([name, n]) => (
            <tr key={`warn-${name}`}>
              <th scope="row">warned by {name} (kept)</th>
              <td className="num">{n}</td>
            </tr>
          ))}
          <tr>
            <th scope="row">watermark after the batch</th>
            <td className="mono">{result.watermark ? result.watermark.toISOString() : "—"}</td>
          </tr>
        </tbody>
      </table>
      <div className="draft-toolbar">
        <h3 className="section-title">Row by row</h3>
        <select aria-label="Show rows" value={only} onChange={(e) => setOnly(e.target.value)}>
          <option value="">every outcome ({result.rows.length})</option>
          {OUTCOME_COLUMNS.map(({ column, label }) => {
            const n = result.rows.filter((r) => r.verdict.outcome === column).length;
            return n > 0 ? (
              <option key={column} value={column}>
                {label} ({n})
              </option>
            ) : null;
          })}
        </select>
      </div>
      <div className="draft-scroll">
        <table className="table table--compact" data-testid="dry-run-rows">
          <thead>
            <tr>
              <th>partition</th>
              <th>offset</th>
              <th>outcome</th>
              <th>why</th>
              <th>expectations</th>
              <th>dedup key / window</th>
              <th>value</th>
            </tr>
          </thead>
          <tbody>
            {result.rows
              .filter((r) => only === "" || r.verdict.outcome === only)
              .map((r) => (
                <tr key={`${r.partition}:${r.offset}`} data-outcome={r.verdict.outcome}>
                  <td className="num">{r.partition}</td>
                  <td className="num">{r.offset}</td>
                  <td>
                    <span className={`badge ${BADGE_OF_TONE[outcomeOfColumn(r.verdict.outcome).tone]}`}>
                      {outcomeOfColumn(r.verdict.outcome).label}
                    </span>
                    {r.verdict.lateAccepted ? <span className="muted small"> late, accepted</span> : null}
                  </td>
                  <td className="small">
                    {r.verdict.reason ?? ""}
                    {r.verdict.rescued ? (
                      <span className="muted"> rescued: {Object.keys(r.verdict.rescued).join(", ")}</span>
                    ) : null}
                  </td>
                  <td className="small">
                    {(r.verdict.expectations ?? [])
                      .map((e) => `${e.name} ${e.passed ? "✓" : `✗ (${e.action})`}`)
                      .join(", ")}
                  </td>
                  <td className="small mono">
                    {r.verdict.dedupKey ?? ""}
                    {(r.windows ?? [])
                      .map(
                        (w) =>
                          ` ${w.group}${w.start ? ` [${w.start.toISOString().slice(11, 16)}, ${w.end!.toISOString().slice(11, 16)})` : ""}`,
                      )
                      .join("")}
                  </td>
                  <td className="small mono draft-value">{r.value ?? "(null)"}</td>
                </tr>
              ))}
          </tbody>
        </table>
      </div>
      <h3 className="section-title">
        What it would write to {result.result.target} ({result.result.rows.length}{" "}
        {result.result.kind === "webhook" ? "deliveries" : "rows"}
        {result.result.rows.length > 50 ? ", the first 50 shown" : ""})
      </h3>
      {result.result.rows.length === 0 ? (
        <p className="muted">No result rows from this sample.</p>
      ) : (
        <div className="draft-scroll">
          <table className="table table--compact" data-testid="dry-run-result-rows">
            <thead>
              <tr>
                {columns.map((c) => (
                  <th key={c}>{c}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {result.result.rows.slice(0, 50).map((row, i) => (
                <tr key={i}>
                  {columns.map((c) => (
                    <td key={c} className="small mono">
                      {show(row[c])}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

const show = (v: unknown) =>
  v === null || v === undefined
    ? ""
    : v instanceof Date
      ? v.toISOString()
      : typeof v === "object"
        ? JSON.stringify(v)
        : String(v);
