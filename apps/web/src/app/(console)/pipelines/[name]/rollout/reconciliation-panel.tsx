"use client";
// The newest reconciliation of blue against green (rollout_reconciliations, run by the workers while
// the rollout runs): over what both have committed, how many keys match, are only on one side or
// differ — the largest differences first — and the outcome counts that explain them in words.
import type { TRolloutPage } from "@sluice/services";
import type { ReactNode } from "react";
import { Time } from "@/components/time";
import { formatValue } from "@/lib/format";

type TStored = TRolloutPage["reconciliations"][number];

const keyText = (k: Record<string, string | null>) =>
  Object.entries(k)
    .map(([c, v]) => `${c}=${v ?? "null"}`)
    .join(", ");

function rangeText(r: NonNullable<NonNullable<TStored["report"]>["range"]>): string {
  if (r.basis === "event_time")
    return `final windows ${r.from ?? "from the first"} … ${r.to ?? "none yet"}, compared per ${r.grain}`;
  return `${r.topic} offsets ${r.partitions.map((p) => `${p.partition}:[${p.from}, ${p.to})`).join(" ")}`;
}

/** One output's newest reconciliation (a spec's only sink has the output ""). */
export function ReconciliationPanel({
  reconciliation: rec,
  action,
}: {
  reconciliation: TStored;
  action?: ReactNode;
}) {
  const report = rec.report;
  const c = report?.counts;
  return (
    <section className="panel" data-testid="reconciliation" data-status={rec.status} data-output={rec.output}>
      <h2>
        Reconciliation
        {rec.output ? (
          <>
            {" "}
            of output <span className="mono">{rec.output}</span>
          </>
        ) : null}{" "}
        <span className="small muted">#{rec.id}</span>
      </h2>
      {action}
      <p className="small">
        {rec.status === "compared"
          ? "Compared"
          : rec.status === "waiting"
            ? "Waiting: nothing both versions committed can be compared yet"
            : rec.status === "not_comparable"
              ? "Not comparable"
              : "Failed"}{" "}
        · <Time value={rec.finishedAt} /> in {formatValue(rec.durationMs, "ms")} · by {rec.requestedBy}
        {report?.range ? <> · {rangeText(report.range)}</> : null}
      </p>
      {rec.error ? <p className="form__error small">{rec.error}</p> : null}
      {c ? (
        <table className="table table--compact" data-testid="reconciliation-counts">
          <thead>
            <tr>
              <th>rows (blue / green)</th>
              <th>keys matching</th>
              <th>only in blue</th>
              <th>only in green</th>
              <th>differing</th>
              <th>rewritten later on the other side</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td>
                {formatValue(c.blue.rows, "count")} / {formatValue(c.green.rows, "count")}
              </td>
              <td>{formatValue(c.matching, "count")}</td>
              <td className={c.onlyBlue > 0 ? "warn" : ""}>{formatValue(c.onlyBlue, "count")}</td>
              <td className={c.onlyGreen > 0 ? "warn" : ""}>{formatValue(c.onlyGreen, "count")}</td>
              <td className={c.differing > 0 ? "warn" : ""}>{formatValue(c.differing, "count")}</td>
              <td>{formatValue(c.laterOnOtherSide, "count")}</td>
            </tr>
          </tbody>
        </table>
      ) : null}
      {report && report.outcomes && report.outcomes.explanations.length > 0 ? (
        <>
          <h3>What explains it</h3>
          <ul data-testid="reconciliation-explanations">
            {report.outcomes.explanations.map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
        </>
      ) : null}
      {report && report.differences.length > 0 ? (
        <>
          <h3>Largest differences</h3>
          <table className="table table--compact" data-testid="reconciliation-differences">
            <thead>
              <tr>
                <th>key</th>
                <th>column</th>
                <th>blue</th>
                <th>green</th>
                <th>green − blue</th>
              </tr>
            </thead>
            <tbody>
              {report.differences.slice(0, 20).flatMap((d) =>
                d.columns.map((col, i) => (
                  <tr key={`${keyText(d.key)}-${col.column}`}>
                    <td className="mono small">{i === 0 ? keyText(d.key) : ""}</td>
                    <td className="mono small">{col.column}</td>
                    <td className="mono small">{col.blue ?? "null"}</td>
                    <td className="mono small">{col.green ?? "null"}</td>
                    <td className="mono small">{col.delta ?? ""}</td>
                  </tr>
                )),
              )}
            </tbody>
          </table>
        </>
      ) : null}
      {report && (report.onlyBlue.length > 0 || report.onlyGreen.length > 0) ? (
        <>
          <h3>Keys on one side only (first of each)</h3>
          <ul className="small mono">
            {report.onlyBlue.slice(0, 10).map((k) => (
              <li key={`b-${keyText(k)}`}>blue only: {keyText(k)}</li>
            ))}
            {report.onlyGreen.slice(0, 10).map((k) => (
              <li key={`g-${keyText(k)}`}>green only: {keyText(k)}</li>
            ))}
          </ul>
        </>
      ) : null}
      {report && report.notComparable.length > 0 ? (
        <>
          <h3>Left out of the comparison</h3>
          <ul className="small">
            {report.notComparable.map((n) => (
              <li key={n.what}>
                <strong>{n.what}</strong>: {n.reason}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
