// The recent committed batches, newest first: one row each from its progress record. A pipeline with
// several outputs gets a column per output (rows written, its own late count, its state after the
// batch), a join the rows waiting for the dimension after each batch; the numbers come from
// @sluice/services (find-batch-progress.ts) as they are.
import type { TBatchSummary } from "@sluice/services";
import Link from "next/link";
import { batchHref } from "./links";
import { formatBytes, formatCount, formatMs } from "@/lib/format";
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
  // Named outputs, in the newest batch's order (a version's outputs do not change).
  const outputs = (batches[0]?.outputs ?? []).map((o) => o.name).filter((n) => n !== "");
  const joined = batches.some((b) => b.joinWaiting !== null);
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
        {outputs.length > 0 ? (
          <>
            {" "}
            <strong>Late</strong> counts only rows late for every output; each output&apos;s column has its
            own: rows written, rows late for it, and its state after the batch.
          </>
        ) : null}
        {joined ? (
          <>
            {" "}
            <strong>Waiting</strong>: rows held for the dimension after the batch (counted in Sink, not yet
            written).
          </>
        ) : null}
      </p>
      <table className="table table--compact batch-history-table">
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
            {joined ? <th className="num">Waiting</th> : null}
            {outputs.map((name) => (
              <th key={name} className="num">
                Output <span className="mono">{name}</span>
                <div className="muted small">written · late · state</div>
              </th>
            ))}
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
              {joined ? (
                <td className="num" data-testid="batch-join-waiting">
                  {b.joinWaiting === null ? "—" : formatCount(b.joinWaiting)}
                </td>
              ) : null}
              {outputs.map((name) => {
                const o = b.outputs.find((x) => x.name === name);
                return (
                  <td key={name} className="num" data-testid={`batch-output-${name}`}>
                    {o ? (
                      <>
                        {formatCount(o.sink)} ·{" "}
                        <span className={o.late > 0 ? "warn" : undefined} data-testid="batch-output-late">
                          {formatCount(o.late)} late
                        </span>{" "}
                        ·{" "}
                        <span className="muted small" title={formatBytes(o.stateBytes)}>
                          {formatCount(o.stateRows)} rows
                        </span>
                      </>
                    ) : (
                      "—"
                    )}
                  </td>
                );
              })}
              <td className="num">{formatCount(b.backlog)}</td>
              <td>
                <Time value={b.watermark} />
              </td>
              <td>
                {b.group ? (
                  <span className="badge" title={`partitions p with p mod ${b.group.of} = ${b.group.no}`}>
                    group {b.group.no} of {b.group.of}
                  </span>
                ) : null}
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
