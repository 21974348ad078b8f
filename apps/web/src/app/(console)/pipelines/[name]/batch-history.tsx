// The recent committed batches, newest first: one row each from its progress record.
import type { TBatchSummary } from "@sluice/services";
import Link from "next/link";
import { batchHref } from "./links";
import { formatCount, formatMs } from "@/lib/format";
import { Time } from "@/components/time";

export function BatchHistory({
  batches,
  pipeline,
  version,
}: {
  batches: TBatchSummary[];
  pipeline: string;
  version: number | null;
}) {
  return (
    <section className="panel" data-testid="batch-history">
      <h2 className="panel__title">Recent batches</h2>
      <p className="muted small">
        {batches.length === 1
          ? "The one committed batch so far."
          : `The newest ${batches.length} committed batches.`}{" "}
        <strong>Read ahead</strong>: read and processed while the batch before it committed.{" "}
        <strong>Replayed</strong>: a planned batch that had not committed ran again over the same offsets
        (after a crash or a lost lease).
      </p>
      <table className="table table--compact">
        <thead>
          <tr>
            <th className="num">Batch</th>
            <th>Committed</th>
            <th className="num">Input</th>
            <th className="num">Duration</th>
            <th className="num">Sink</th>
            <th className="num">Duplicates</th>
            <th className="num">Quarantined</th>
            <th className="num">Dead letters</th>
            <th className="num">Late</th>
            <th className="num">Backlog</th>
            <th>Watermark</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {batches.map((b) => (
            <tr key={b.batchId} data-testid={`batch-${b.batchId}`}>
              <td className="num strong">
                <Link href={batchHref(pipeline, b.batchId, version)}>{b.batchId}</Link>
              </td>
              <td>
                <Time value={b.committedAt} />
              </td>
              <td className="num">{formatCount(b.inputRows)}</td>
              <td className="num">{formatMs(b.durationMs)}</td>
              <td className="num">{formatCount(b.sink)}</td>
              <td className="num">{formatCount(b.duplicate)}</td>
              <td className={b.quarantined > 0 ? "num warn" : "num"}>{formatCount(b.quarantined)}</td>
              <td className={b.deadLetter > 0 ? "num warn" : "num"}>{formatCount(b.deadLetter)}</td>
              <td className={b.late > 0 ? "num warn" : "num"}>{formatCount(b.late)}</td>
              <td className="num">{formatCount(b.backlog)}</td>
              <td>
                <Time value={b.watermark} />
              </td>
              <td>
                {b.preparedAhead ? <span className="badge">read ahead</span> : null}
                {b.replayed ? <span className="badge badge--warn">replayed</span> : null}
                {b.deadLetterReplay ? (
                  <span
                    className="badge"
                    title={`replay request #${b.deadLetterReplay.replayIds.join(", #")}`}
                  >
                    dead-letter replay ({b.deadLetterReplay.rows})
                  </span>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
