// Rows of the latest version that did not reach the sink for a reason a person must see: counts by
// outcome, the most frequent reasons (grouped with the row's own values taken out), the newest rows
// with their replay status. With `select` (users who may replay) rows get checkboxes and each reason
// a "Replay all" button; the replay itself is asked for in replay-dead-letters.tsx.
import type { TDeadLetterOutcome, TDeadLetterRowView, TDeadLetterSummary } from "@sluice/services";
import { EmptyState } from "@/components/empty-state";
import { formatCount } from "./format";
import { Time } from "./time";

const OUTCOME_LABEL: Record<TDeadLetterOutcome, string> = { dead_letter: "dead letter", quarantined: "quarantined", late: "late" };

export interface TDeadLetterSelect {
  selected: ReadonlySet<number>;
  toggle(id: number): void;
  /** "All with this reason". */
  replayReason(group: { reason: string; outcome: TDeadLetterOutcome }): void;
}

/** A row can be chosen unless it was discarded, is waiting to be replayed, or reached the result in a replay. */
const selectable = (r: TDeadLetterRowView) => !r.discarded && (!r.replay || (r.replay.status === "applied" && ["quarantined", "dead_letter", "late", "refused"].includes(r.replay.outcome ?? "")));

function ReplayStatus({ row: r }: { row: TDeadLetterRowView }) {
  if (r.discarded)
    return (
      <span className="muted">
        discarded by {r.discarded.by} <Time value={r.discarded.at} />
      </span>
    );
  if (!r.replay) return <span className="muted">—</span>;
  if (r.replay.status === "pending")
    return (
      <span>
        replay pending (request #{r.replay.replayId} by {r.replay.by}, <Time value={r.replay.at} />)
      </span>
    );
  if (r.replay.batchId === null)
    return (
      <span>
        not replayed (request #{r.replay.replayId} by {r.replay.by}){r.replay.detail ? <span className="muted"> — {r.replay.detail}</span> : null}
      </span>
    );
  return (
    <span>
      replayed into batch {r.replay.batchId} by {r.replay.by} <Time value={r.replay.at} />: <strong>{r.replay.outcome}</strong>
      {r.replay.detail ? <span className="muted"> — {r.replay.detail}</span> : null}
    </span>
  );
}

export function DeadLetters({ summary: s, select }: { summary: TDeadLetterSummary; select?: TDeadLetterSelect }) {
  const sampled = s.counts.dead_letter > s.reasonSample || s.counts.quarantined > s.reasonSample || s.counts.late > s.reasonSample;
  return (
    <section className="panel" id="dead-letters" data-testid="dead-letters">
      <h2 className="panel__title">Dead letters and quarantine</h2>
      <p className="muted small">
        Kept in table <code>dead_letters</code> with their raw bytes: <strong>dead letter</strong> — the payload could not be decoded;{" "}
        <strong>quarantined</strong> — it broke the contract; <strong>late</strong> — its event time was behind the watermark (with{" "}
        <code>lateData: deadLetter</code>). The reason says what to fix: the producer, or the contract in a new spec version.
      </p>
      {s.counts.total === 0 ? (
        <EmptyState title="Nothing dead-lettered" next={<>Nothing to do. Rows the engine cannot or may not write appear here with their reason.</>}>
          <p>Version {s.version} has no dead-lettered, quarantined or late rows.</p>
        </EmptyState>
      ) : (
        <>
          <p data-testid="dead-letter-counts">
            dead letter <span className="strong">{formatCount(s.counts.dead_letter)}</span> · quarantined{" "}
            <span className="strong">{formatCount(s.counts.quarantined)}</span> · late <span className="strong">{formatCount(s.counts.late)}</span>{" "}
            <span className="muted">({formatCount(s.counts.total)} rows, version {s.version})</span>
          </p>

          <h3 className="section-title">Most frequent reasons</h3>
          <p className="muted small">
            Grouped by what they say: a row&apos;s own values (times, positions, the offending value) are shown as <code>&lt;time&gt;</code>,{" "}
            <code>&lt;n&gt;</code> or <code>…</code>; hover a reason for an example.
            {s.reasonGroups > s.reasons.length ? ` The top ${s.reasons.length} of ${s.reasonGroups} groups.` : ""}
            {sampled ? ` Counted over the newest ${formatCount(s.reasonSample)} rows of each outcome.` : ""}
          </p>
          <table className="table table--compact" data-testid="dead-letter-reasons">
            <thead>
              <tr>
                <th>Outcome</th>
                <th>Reason</th>
                <th className="num">Rows</th>
                <th>Last seen</th>
                {select ? <th /> : null}
              </tr>
            </thead>
            <tbody>
              {s.reasons.map((r) => (
                <tr key={`${r.outcome}:${r.reason}`}>
                  <td>{OUTCOME_LABEL[r.outcome] ?? r.outcome}</td>
                  <td className="small" title={`e.g. ${r.example}`}>
                    {r.reason}
                  </td>
                  <td className="num">{formatCount(r.count)}</td>
                  <td className="muted">
                    <Time value={r.lastAt} />
                  </td>
                  {select ? (
                    <td>
                      <button type="button" className="button button--small" onClick={() => select.replayReason({ reason: r.reason, outcome: r.outcome })}>
                        Replay all…
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>

          <h3 className="section-title">Newest rows</h3>
          <table className="table table--compact" data-testid="dead-letter-rows">
            <thead>
              <tr>
                {select ? <th aria-label="Select" /> : null}
                <th className="num">Partition</th>
                <th className="num">Offset</th>
                <th>Outcome</th>
                <th>Reason</th>
                <th>Ingest time</th>
                <th className="num">Batch</th>
                <th>Replay</th>
              </tr>
            </thead>
            <tbody>
              {s.rows.map((r) => (
                <tr key={r.id}>
                  {select ? (
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`Select dead letter ${r.id} (partition ${r.partition}, offset ${r.offset})`}
                        checked={select.selected.has(r.id)}
                        disabled={!selectable(r)}
                        onChange={() => select.toggle(r.id)}
                      />
                    </td>
                  ) : null}
                  <td className="num">{r.partition}</td>
                  <td className="num mono">{r.offset}</td>
                  <td>{OUTCOME_LABEL[r.outcome] ?? r.outcome}</td>
                  <td className="small">{r.reason}</td>
                  <td className="muted">
                    <Time value={r.ingestTime} />
                  </td>
                  <td className="num">{r.batchId}</td>
                  <td className="small" data-testid="dead-letter-replay-status">
                    <ReplayStatus row={r} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {s.rows.length < s.counts.total ? (
            <p className="muted small">
              The newest {s.rows.length} of {formatCount(s.counts.total)}; the rest (with raw bytes and decoded payload) are in table <code>dead_letters</code>.
            </p>
          ) : null}
        </>
      )}
    </section>
  );
}
