// Freshness, completeness and correctness: three separate signals, never one score. Each says what it
// measures (the title's hover text and the first line), its value and its target.
import type { TPipelineSignals } from "@sluice/services";
import { formatMs, formatValue } from "@/lib/format";

const DEFINITIONS = {
  freshness:
    "How old the newest committed data is: by its Kafka append time (ingest) and by its own event time. Over target only while input waits — a quiet topic is old, not late.",
  completeness:
    "Whether everything that arrived got through: the backlog not yet committed, late and dead-lettered rows as shares of the range's input, and partitions not read yet.",
  correctness:
    "Whether what got through is right: expectation violations per input row against the target, the quarantined share, and whether every batch balanced (input = sum of outcomes).",
} as const;

function Panel({
  id,
  title,
  bad,
  children,
}: {
  id: keyof typeof DEFINITIONS;
  title: string;
  bad: boolean | null;
  children: React.ReactNode;
}) {
  return (
    <section
      className={`signal ${bad ? "signal--bad" : bad === false ? "signal--ok" : ""}`}
      data-testid={`signal-${id}`}
      data-bad={bad === null ? "unknown" : String(bad)}
    >
      <h3 title={DEFINITIONS[id]}>
        {title}{" "}
        <span className={bad ? "badge badge--bad" : bad === false ? "badge badge--ok" : "badge"}>
          {bad ? "off target" : bad === false ? "on target" : "no data"}
        </span>
      </h3>
      <p className="small muted">{DEFINITIONS[id]}</p>
      <dl>{children}</dl>
    </section>
  );
}

export function SignalPanels({ signals: s }: { signals: TPipelineSignals }) {
  const f = s.freshness;
  const c = s.completeness;
  const k = s.correctness;
  const incomplete =
    c.backlog === null
      ? null
      : (c.backlog > 0 && c.backlogSeconds === null) ||
        c.partitionsNotRead.length > 0 ||
        f.overTarget === true;
  const incorrect =
    k.violationRate === null
      ? k.unbalancedBatches > 0
        ? true
        : null
      : k.overTarget === true || k.unbalancedBatches > 0;
  return (
    <div className="signals" data-testid="signals">
      <Panel id="freshness" title="Freshness" bad={f.overTarget}>
        <dt>ingest age</dt>
        <dd data-testid="freshness-ingest">{f.ingestAgeMs === null ? "—" : formatMs(f.ingestAgeMs)}</dd>
        <dt>event-time age</dt>
        <dd>{f.eventTimeAgeMs === null ? "—" : formatMs(f.eventTimeAgeMs)}</dd>
        <dt>target</dt>
        <dd>≤ {formatMs(f.targetMs)} while input waits</dd>
      </Panel>
      <Panel id="completeness" title="Completeness" bad={incomplete}>
        <dt>backlog</dt>
        <dd data-testid="completeness-backlog">
          {formatValue(c.backlog, "count", true)}
          {c.backlog && c.backlog > 0
            ? c.backlogSeconds === null
              ? " · not draining"
              : ` · drains in ${formatMs(c.backlogSeconds * 1000)}`
            : ""}
        </dd>
        <dt>late</dt>
        <dd>{formatValue(c.lateShare, "share")}</dd>
        <dt>dead-lettered</dt>
        <dd>{formatValue(c.deadLetterShare, "share")}</dd>
        <dt>partitions not read</dt>
        <dd>
          {c.partitions === 0
            ? "—"
            : c.partitionsNotRead.length === 0
              ? `none of ${c.partitions}`
              : c.partitionsNotRead.join(", ")}
        </dd>
      </Panel>
      <Panel id="correctness" title="Correctness" bad={incorrect}>
        <dt>violation rate</dt>
        <dd data-testid="correctness-violations">
          {formatValue(k.violationRate, "share")} ({formatValue(k.violations, "count", true)} violations)
        </dd>
        <dt>target</dt>
        <dd>≤ {formatValue(k.targetRate, "share")}</dd>
        <dt>quarantined</dt>
        <dd>{formatValue(k.quarantinedShare, "share")}</dd>
        <dt>every batch balanced</dt>
        <dd>{k.unbalancedBatches === 0 ? "yes" : `no: ${k.unbalancedBatches} batch(es)`}</dd>
      </Panel>
    </div>
  );
}
