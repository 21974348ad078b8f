// The newest progress record: rates, backlog, watermark, state, where every input row went, a join's
// and each output's part (combine-panels.tsx), the expectations it violated, and per partition the
// offsets read and the event-time clock that decides whether the partition still holds the watermark
// back.
import type { TBatchProgressView, TPipelineDetail } from "@sluice/services";
import type { ReactNode } from "react";
import { formatBytes, formatCount, formatMs } from "@/lib/format";
import { Time } from "@/components/time";
import { outcomeEntries } from "@/lib/outcome-labels";
import { BatchJoin, BatchOutputs } from "./combine-panels";

type TEventTime = NonNullable<TPipelineDetail["version"]>["eventTime"];

export function LatestBatch({ latest: b, eventTime }: { latest: TBatchProgressView; eventTime: TEventTime }) {
  const o = b.outcomes;
  const expectations = Object.entries(b.expectations).filter(([, n]) => n > 0);
  const idle = b.partitions.filter((p) => p.idle === true).length;
  return (
    <section className="panel" data-testid="latest-batch">
      <h2 className="panel__title">Latest batch</h2>
      <p className="small">
        <span className="strong" data-testid="latest-batch-id">
          Batch {b.batchId}
        </span>{" "}
        at <Time value={b.timestamp} />
        {b.replayed ? <span className="badge badge--warn">replayed plan</span> : null}
        {b.preparedAhead ? <span className="badge">read ahead</span> : null}
        {b.inputRows === 0 ? (
          <span className="muted">
            {" "}
            — a batch without input (moves the watermark when partitions go idle)
          </span>
        ) : null}
      </p>
      <dl className="stats">
        <Stat label="Input rows" value={formatCount(b.inputRows)} />
        <Stat label="Input rows/s" value={formatCount(b.inputRowsPerSecond)} />
        <Stat label="Processed rows/s" value={formatCount(b.processedRowsPerSecond)} />
        <Stat
          label="Duration"
          value={formatMs(b.durationMs?.total)}
          title={
            b.durationMs
              ? `plan ${b.durationMs.plan} ms, read ${b.durationMs.read} ms, process ${b.durationMs.process} ms, commit ${b.durationMs.commit} ms`
              : undefined
          }
        />
        <Stat label="Backlog" value={formatCount(b.backlog)} hint="offsets not yet read" />
        <Stat label="Watermark" value={<Time value={b.watermark} />} testId="latest-watermark" />
        <Stat label="Max event time" value={<Time value={b.eventTimeMax} />} />
        <Stat label="State" value={`${formatCount(b.stateRows)} rows`} hint={formatBytes(b.stateBytes)} />
      </dl>

      <h3 className="section-title">Where the {formatCount(b.inputRows)} input rows went</h3>
      <ul className="outcomes" data-testid="latest-outcomes">
        {outcomeEntries(o).map((e) => (
          <Outcome
            key={e.key}
            // Behind a join the rows the source admits go to the join first, not yet to the table.
            label={b.join && e.key === "sink" ? "to the join" : e.label}
            n={e.n}
            warn={e.tone === "warn"}
          />
        ))}
      </ul>
      {b.join ? (
        <p className="muted small" data-testid="latest-join-handoff">
          Of the {formatCount(o.sink)} rows handed to the join, {formatCount(b.join.held)} started waiting for
          the dimension; {formatCount(b.join.released)} rows waiting from earlier batches were released. What
          reached the sink is under &ldquo;Join with the dimension&rdquo; below.
        </p>
      ) : null}
      {b.lateAccepted > 0 ? (
        <p className="muted small">
          {formatCount(b.lateAccepted)} rows behind the watermark but within allowedLateness still updated
          their window (counted in sink).
        </p>
      ) : null}
      {b.operator ? (
        <p className="muted small">
          {b.operator.kind}:{" "}
          {Object.entries(b.operator)
            .filter(([k]) => k !== "kind")
            .map(([k, v]) => `${k} ${typeof v === "number" ? formatCount(v) : v}`)
            .join(", ")}
        </p>
      ) : null}

      <BatchJoin join={b.join} />
      <BatchOutputs outputs={b.outputs} />

      <h3 className="section-title">Expectation violations</h3>
      {expectations.length === 0 ? (
        <p className="muted small">None in this batch.</p>
      ) : (
        <table className="table table--compact" data-testid="expectations">
          <thead>
            <tr>
              <th>Expectation</th>
              <th className="num">Rows</th>
              <th>Action</th>
            </tr>
          </thead>
          <tbody>
            {expectations.map(([name, n]) => (
              <tr key={name}>
                <td className="mono">{name}</td>
                <td className="num">{formatCount(n)}</td>
                <td className="muted">{o.dropped[name] ? "dropped" : "kept (warn)"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h3 className="section-title">Partitions</h3>
      <p className="muted small">
        Kafka orders events only inside a partition, so the watermark follows the slowest partition that is
        still sending: the lowest max event time among active partitions, minus the watermark delay
        {eventTime?.watermarkDelay ? ` (${eventTime.watermarkDelay})` : ""}. A partition that has read nothing
        for the idle timeout{eventTime ? ` (${eventTime.idleTimeout})` : ""} is <strong>idle</strong>: it no
        longer holds the watermark back, so one quiet partition does not stall windows and late-data decisions
        for the others. When every partition is idle, the newest event time seen anywhere counts. Idle is as
        of this batch, by the runner&apos;s clock.
        {idle > 0 ? ` Idle in this batch: ${idle} of ${b.partitions.length} partitions.` : ""}
      </p>
      {b.partitions.length === 0 ? (
        <p className="muted small">No partitions in this record.</p>
      ) : (
        <table className="table table--compact" data-testid="partitions">
          <thead>
            <tr>
              <th className="num">Partition</th>
              <th className="num">Offsets read</th>
              <th className="num">Latest offset</th>
              <th>Max event time</th>
              <th>Last data</th>
              <th>Status</th>
            </tr>
          </thead>
          <tbody>
            {b.partitions.map((p) => (
              <tr key={p.partition} data-testid={`partition-${p.partition}`}>
                <td className="num">{p.partition}</td>
                <td className="num">
                  {p.startOffset === null || p.endOffset === null || p.endOffset <= p.startOffset ? (
                    <span className="muted">none</span>
                  ) : (
                    <span title={`offsets ${p.startOffset} to ${p.endOffset - 1}`}>
                      {formatCount(p.endOffset - p.startOffset)}{" "}
                      <span className="muted">from {formatCount(p.startOffset)}</span>
                    </span>
                  )}
                </td>
                <td className="num">{formatCount(p.latestOffset)}</td>
                <td>
                  {p.eventTimeMax ? (
                    <Time value={p.eventTimeMax} />
                  ) : (
                    <span className="muted">no event time yet</span>
                  )}
                </td>
                <td>
                  <Time value={p.lastDataAt} />
                  {p.lastDataAt && b.timestamp.getTime() - p.lastDataAt.getTime() >= 1000 ? (
                    <span className="muted">
                      {" "}
                      ({formatMs(b.timestamp.getTime() - p.lastDataAt.getTime())} before the batch)
                    </span>
                  ) : null}
                </td>
                <td>
                  {p.idle === null ? (
                    <span className="muted">—</span>
                  ) : p.idle ? (
                    <span
                      className="badge badge--idle"
                      title="No data for the idle timeout: this partition does not hold the watermark back."
                    >
                      idle
                    </span>
                  ) : (
                    <span
                      className="badge badge--ok"
                      title="Sending: the watermark waits for this partition's event time."
                    >
                      active
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Stat({
  label,
  value,
  hint,
  title,
  testId,
}: {
  label: string;
  value: ReactNode;
  hint?: string;
  title?: string;
  testId?: string;
}) {
  return (
    <div title={title}>
      <dt>{label}</dt>
      <dd data-testid={testId}>
        {value}
        {hint ? <span className="muted small"> {hint}</span> : null}
      </dd>
    </div>
  );
}

function Outcome({ label, n, warn }: { label: string; n: number; warn?: boolean }) {
  return (
    <li className={n === 0 ? "muted" : warn ? "warn" : undefined}>
      {label} <span className="num strong">{formatCount(n)}</span>
    </li>
  );
}
