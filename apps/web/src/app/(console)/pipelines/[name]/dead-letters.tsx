// Rows of the latest version that did not reach the sink for a reason a person must see: counts by
// outcome, the most frequent reasons (grouped with the row's own values taken out); the rows themselves
// are browsed below them (dead-letter-browser.tsx); "Show rows" narrows those to one reason group, to
// inspect, replay or discard all of it.
import type { TDeadLetterOutcome, TDeadLetterSummary } from "@sluice/services";
import type { ReactNode } from "react";
import { EmptyState } from "@/components/empty-state";
import { formatCount } from "@/lib/format";
import { Time } from "@/components/time";

const OUTCOME_LABEL: Record<TDeadLetterOutcome, string> = {
  dead_letter: "dead letter",
  quarantined: "quarantined",
  late: "late",
};

/** A reason group the rows below are narrowed to ("Show rows" on the group). */
export type TReasonGroupChoice = { outcome: TDeadLetterOutcome; reason: string };

export function DeadLetters({
  summary: s,
  onShowGroup,
  children,
}: {
  summary: TDeadLetterSummary;
  onShowGroup?: (g: TReasonGroupChoice) => void;
  children?: ReactNode;
}) {
  const sampled =
    s.counts.dead_letter > s.reasonSample ||
    s.counts.quarantined > s.reasonSample ||
    s.counts.late > s.reasonSample;
  return (
    <section className="panel" id="dead-letters" data-testid="dead-letters">
      <h2 className="panel__title">Dead letters and quarantine</h2>
      <p className="muted small">
        Kept in table <code>dead_letters</code> with their raw bytes: <strong>dead letter</strong> — the
        payload could not be decoded; <strong>quarantined</strong> — it broke the contract;{" "}
        <strong>late</strong> — its event time was behind the watermark (with{" "}
        <code>lateData: deadLetter</code>). The reason says what to fix: the producer, or the contract in a
        new spec version.
      </p>
      {s.counts.total === 0 ? (
        <EmptyState
          title="Nothing dead-lettered"
          next={<>Nothing to do. Rows the engine cannot or may not write appear here with their reason.</>}
        >
          <p>Version {s.version} has no dead-lettered, quarantined or late rows.</p>
        </EmptyState>
      ) : (
        <>
          <p data-testid="dead-letter-counts">
            dead letter <span className="strong">{formatCount(s.counts.dead_letter)}</span> · quarantined{" "}
            <span className="strong">{formatCount(s.counts.quarantined)}</span> · late{" "}
            <span className="strong">{formatCount(s.counts.late)}</span>{" "}
            <span className="muted">
              ({formatCount(s.counts.total)} rows, version {s.version})
            </span>
          </p>

          <h3 className="section-title">Most frequent reasons</h3>
          <p className="muted small">
            Grouped by what they say: a row&apos;s own values (times, positions, the offending value) are
            shown as <code>&lt;time&gt;</code>, <code>&lt;n&gt;</code> or <code>…</code>; hover a reason for
            an example.
            {s.reasonGroups > s.reasons.length
              ? ` The top ${s.reasons.length} of ${s.reasonGroups} groups.`
              : ""}
            {sampled ? ` Counted over the newest ${formatCount(s.reasonSample)} rows of each outcome.` : ""}
          </p>
          <table className="table table--compact" data-testid="dead-letter-reasons">
            <thead>
              <tr>
                <th>Outcome</th>
                <th>Reason</th>
                <th className="num">Rows</th>
                <th>Last seen</th>
                {onShowGroup ? <th aria-label="Rows" /> : null}
              </tr>
            </thead>
            <tbody>
              {s.reasons.map((r) => (
                <tr key={`${r.outcome}:${r.reason}`}>
                  <td>{OUTCOME_LABEL[r.outcome] ?? r.outcome}</td>
                  <td className="small" title={`e.g. ${r.example}`}>
                    <div className="clamp-3">{r.reason}</div>
                  </td>
                  <td className="num">{formatCount(r.count)}</td>
                  <td className="muted">
                    <Time value={r.lastAt} />
                  </td>
                  {onShowGroup ? (
                    <td>
                      <button
                        type="button"
                        className="button button--small"
                        onClick={() => onShowGroup({ outcome: r.outcome, reason: r.reason })}
                      >
                        Show rows
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {children}
    </section>
  );
}
