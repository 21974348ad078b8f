"use client";
// One batch (signals.batch → getBatchDetail): plan and offsets per partition, outcomes, phases,
// watermark before and after, state after, a join's and each output's part (combine-panels.tsx), read
// ahead or replayed, failures, links to its dead letters.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { formatBytes, formatMs, formatValue } from "@/lib/format";
import { EmptyState } from "@/components/empty-state";
import { outcomeEntries } from "@/lib/outcome-labels";
import { useTRPC } from "@/trpc/react";
import { batchHref, deadLettersHref, pipelineHref } from "../../links";
import { BatchJoin, BatchOutputs } from "../../combine-panels";
import { Time } from "@/components/time";

export function BatchDetail({ pipeline, batchId }: { pipeline: string; batchId: number }) {
  const trpc = useTRPC();
  const v = Number(useSearchParams().get("v"));
  const version = Number.isInteger(v) && v > 0 ? v : undefined;
  const q = useQuery({ ...trpc.signals.batch.queryOptions({ pipeline, version, batchId }), retry: false });
  if (q.isPending) return <p className="muted">Loading the batch…</p>;
  if (q.isError) {
    if ((q.error as { data?: { code?: string } }).data?.code === "NOT_FOUND")
      return (
        <EmptyState
          title="Batch not found"
          next={
            <>
              Open the pipeline&apos;s <Link href={pipelineHref(pipeline, version)}>recent batches</Link> and
              pick one.
            </>
          }
        >
          <p>
            Batch {batchId} of <span className="mono">{pipeline}</span>
            {version ? ` version ${version}` : ""} was neither planned, committed nor failed.
          </p>
        </EmptyState>
      );
    return (
      <p className="form__error" role="alert">
        Could not load the batch: {q.error.message}
      </p>
    );
  }
  const d = q.data;
  const c = d.committed;
  const planned = new Map((d.plan ?? []).map((r) => [r.partition, r]));
  const partitions =
    c?.partitions ??
    [...planned.values()].map((r) => ({
      partition: r.partition,
      startOffset: r.from,
      endOffset: r.to,
      latestOffset: null,
      eventTimeMax: null,
      lastDataAt: null,
      idle: null,
    }));
  return (
    <div className="stack" data-testid="batch-detail" data-batch-id={d.batchId}>
      <section className="panel">
        <h2 className="panel__title">
          {c ? (
            <span className="badge badge--ok">committed</span>
          ) : d.failures.length > 0 ? (
            <span className="badge badge--bad">failed, not committed</span>
          ) : (
            <span className="badge badge--warn">planned, not committed</span>
          )}{" "}
          version {d.version}
          {c?.preparedAhead ? <span className="badge"> read ahead</span> : null}
          {c?.replayed ? <span className="badge badge--warn"> replayed</span> : null}
          {c?.deadLetterReplay ? (
            <span className="badge" data-testid="dead-letter-replay-badge">
              {" "}
              dead-letter replay: {c.deadLetterReplay.rows} row(s) of request #
              {c.deadLetterReplay.replayIds.join(", #")} (no Kafka range; offsets and watermark unchanged)
            </span>
          ) : null}
        </h2>
        <p className="small">
          {d.previousBatchId !== null ? (
            <Link href={batchHref(pipeline, d.previousBatchId, version)}>← batch {d.previousBatchId}</Link>
          ) : null}
          {d.nextBatchId !== null ? (
            <>
              {" · "}
              <Link href={batchHref(pipeline, d.nextBatchId, version)}>batch {d.nextBatchId} →</Link>
            </>
          ) : null}
        </p>
        {d.failures.map((f, i) => (
          <p key={i} className="form__error" role="alert" data-testid="batch-failure">
            <Time value={f.at} /> — {f.kind}
            {f.rule ? ` (rule ${f.rule}, ${f.rowCount} rows)` : ""}: {f.message}
          </p>
        ))}
        {c ? (
          <dl className="facts" data-testid="batch-facts">
            <div>
              <dt>Committed</dt>
              <dd>
                <Time value={c.committedAt} />
              </dd>
            </div>
            <div>
              <dt>Input rows</dt>
              <dd data-testid="batch-input">{formatValue(c.inputRows, "count", true)}</dd>
            </div>
            <div>
              <dt>Phases</dt>
              <dd>
                {c.durationMs
                  ? `plan ${formatMs(c.durationMs.plan)} · read ${formatMs(c.durationMs.read)} · process ${formatMs(c.durationMs.process)} · commit ${formatMs(c.durationMs.commit)} · total ${formatMs(c.durationMs.total)}`
                  : "—"}
              </dd>
            </div>
            <div>
              <dt>End-to-end latency</dt>
              <dd>
                {c.latencyMs
                  ? `p50 ${formatMs(c.latencyMs.p50)} · p95 ${formatMs(c.latencyMs.p95)} · p99 ${formatMs(c.latencyMs.p99)} · max ${formatMs(c.latencyMs.max)}`
                  : "—"}
              </dd>
            </div>
            <div>
              <dt>Watermark</dt>
              <dd>
                <Time value={d.watermarkBefore} /> → <Time value={c.watermark} />
              </dd>
            </div>
            <div>
              <dt>State after</dt>
              <dd>
                {formatValue(c.stateRows, "count", true)} rows, {formatBytes(c.stateBytes)}
              </dd>
            </div>
            <div>
              <dt>Outcomes</dt>
              <dd data-testid="batch-outcomes">
                {outcomeEntries(c.outcomes)
                  .map((e) => `${e.label} ${e.n}`)
                  .join(" · ")}
              </dd>
            </div>
            <div>
              <dt>Expectation violations</dt>
              <dd>
                {Object.keys(c.expectations).length === 0
                  ? "none"
                  : Object.entries(c.expectations)
                      .map(([k, n]) => `${k} ${n}`)
                      .join(" · ")}
              </dd>
            </div>
          </dl>
        ) : null}
        {c ? (
          <>
            <BatchJoin join={c.join} />
            <BatchOutputs outputs={c.outputs} />
          </>
        ) : null}
      </section>
      <section className="panel">
        <h2 className="panel__title">Offsets per partition</h2>
        <table className="table table--compact" data-testid="batch-offsets">
          <thead>
            <tr>
              <th className="num">Partition</th>
              <th className="num">Start</th>
              <th className="num">End</th>
              <th className="num">Rows</th>
              <th className="num">Latest at plan time</th>
              <th>Newest event time</th>
              <th>State</th>
            </tr>
          </thead>
          <tbody>
            {partitions.map((p) => (
              <tr key={p.partition} data-testid={`batch-partition-${p.partition}`}>
                <td className="num strong">{p.partition}</td>
                <td className="num mono">{formatValue(p.startOffset, "count", true)}</td>
                <td className="num mono">{formatValue(p.endOffset, "count", true)}</td>
                <td className="num mono">
                  {p.startOffset !== null && p.endOffset !== null
                    ? formatValue(p.endOffset - p.startOffset, "count", true)
                    : "—"}
                </td>
                <td className="num mono">{formatValue(p.latestOffset, "count", true)}</td>
                <td>
                  <Time value={p.eventTimeMax} />
                </td>
                <td>
                  {p.idle === null ? (
                    "—"
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
      </section>
      <section className="panel" data-testid="batch-dead-letters">
        <h2 className="panel__title">Dead letters of this batch</h2>
        {d.deadLetters.length === 0 ? (
          <p className="muted">
            None: every row of this batch that left the main line was counted (duplicates, filtered, dropped)
            rather than stored.
          </p>
        ) : (
          <p>
            {d.deadLetters.map((x) => `${x.outcome.replace("_", " ")} ${x.count}`).join(" · ")} — see them
            with their reasons under <Link href={deadLettersHref(pipeline)}>Dead letters and quarantine</Link>{" "}
            (table <code>dead_letters</code>, batch_id = {d.batchId}).
          </p>
        )}
      </section>
    </div>
  );
}
