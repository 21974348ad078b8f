// Checkpoint and offsets per partition (signals.offsets): what is committed, what is on the topic, how
// far behind, and whether the partition is idle.
import type { TCheckpointView } from "@sluice/services";
import { formatMs, formatValue } from "@/lib/format";
import { Ago } from "@/components/since";
import { Time } from "@/components/time";

export function OffsetsTable({ view }: { view: TCheckpointView }) {
  return (
    <section className="panel" data-testid="offsets">
      <h2 className="panel__title">Checkpoint and offsets</h2>
      <p className="muted small">
        Last committed batch {view.lastBatchId ?? "—"}, watermark <Time value={view.watermark} />, checkpoint
        written <Time value={view.updatedAt} />. Committed: the next offset the pipeline reads (table{" "}
        <code>checkpoints</code>); latest: the topic&apos;s log end at the newest offset sample (its age
        beside it; never less than committed — a sample older than the last commit shows the committed
        offset). Lag in seconds: lag ÷ the partition&apos;s read rate over the last 5 minutes.
      </p>
      {view.partitions.length === 0 ? (
        <p className="muted">No partition read or sampled yet.</p>
      ) : (
        <table className="table table--compact">
          <thead>
            <tr>
              <th className="num">Partition</th>
              <th className="num">Committed</th>
              <th className="num">Latest</th>
              <th className="num">Lag (events)</th>
              <th className="num">Lag (time)</th>
              <th>Last data</th>
              <th>State</th>
            </tr>
          </thead>
          <tbody>
            {view.partitions.map((p) => (
              <tr key={p.partition} data-testid={`offsets-${p.partition}`} data-lag={p.lagEvents ?? ""}>
                <td className="num strong">{p.partition}</td>
                <td className="num mono">{formatValue(p.committedOffset, "count", true)}</td>
                <td className="num mono" data-testid="offsets-latest">
                  {formatValue(p.latestOffset, "count", true)}
                  {p.sampledAt ? (
                    <span className="muted small" data-testid="offsets-sample-age">
                      {" "}
                      ({p.latestFrom === "checkpoint" ? "≥, " : ""}sampled <Ago at={new Date(p.sampledAt)} />)
                    </span>
                  ) : null}
                </td>
                <td className="num mono">{formatValue(p.lagEvents, "count", true)}</td>
                <td className="num mono">
                  {p.lagEvents ? (
                    p.lagSeconds === null ? (
                      <span className="bad">not draining</span>
                    ) : (
                      formatMs(p.lagSeconds * 1000)
                    )
                  ) : (
                    "—"
                  )}
                </td>
                <td>
                  <Time value={p.lastDataAt} />
                </td>
                <td>
                  {p.idle === null ? (
                    <span className="muted">—</span>
                  ) : p.idle ? (
                    <span className="badge badge--idle">idle</span>
                  ) : (
                    <span className="badge badge--ok">active</span>
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
