// A pipeline that combines data, in its latest batch: each output (its table, its own watermark, where
// the rows that reached it went — its own late count — and its state) and the join (joined, at the
// bound, missing, dead-lettered, rows waiting for the dimension, the dimension's watermark). The numbers
// come as they are from @sluice/services (combine-progress-view.ts); this only lays them out.
import type { TJoinProgressView, TOutputProgressView } from "@sluice/services";
import { Time } from "@/components/time";
import { formatBytes, formatCount } from "@/lib/format";
import { outcomeEntries } from "@/lib/outcome-labels";

/** The outputs of the batch; nothing for a pipeline with one sink and no join. */
export function BatchOutputs({ outputs }: { outputs: TOutputProgressView[] }) {
  if (outputs.length === 0) return null;
  const several = outputs.length > 1 || outputs[0]!.name !== "";
  return (
    <>
      <h3 className="section-title">{several ? `Outputs (${outputs.length})` : "Output behind the join"}</h3>
      <p className="muted small">
        {several
          ? "One read, one transaction: every output saw this batch. Each has its own watermark and lateness, so a row late for one output may still count in another; only a row late for every output is the pipeline's late outcome above."
          : "The rows the join released to the sink, with the sink's own watermark and state."}
      </p>
      <table className="table table--compact" data-testid="outputs">
        <thead>
          <tr>
            <th>Output</th>
            <th>Sink</th>
            <th>Watermark</th>
            <th className="num">Rows</th>
            <th>Where they went</th>
            <th className="num">Late</th>
            <th className="num">State</th>
          </tr>
        </thead>
        <tbody>
          {outputs.map((o) => (
            <tr key={o.name} data-testid={`output-${o.name || "sink"}`}>
              <td className="mono">{o.name || <span className="muted">sink</span>}</td>
              <td className="mono">{o.sink}</td>
              <td>
                <Time value={o.watermark} />
              </td>
              <td className="num">{formatCount(o.rows)}</td>
              <td className="small">
                {outcomeEntries(o.outcomes)
                  .filter((e) => e.n > 0)
                  .map((e) => (
                    <span key={e.key} className={e.tone === "warn" ? "warn" : undefined}>
                      {e.label} {formatCount(e.n)}
                    </span>
                  ))
                  .flatMap((el, i) => (i === 0 ? [el] : [" · ", el]))}
                {o.lateAccepted > 0 ? (
                  <span className="muted">
                    {" "}
                    ({formatCount(o.lateAccepted)} late but within allowedLateness, in sink)
                  </span>
                ) : null}
                {Object.entries(o.expectations).some(([, n]) => n > 0) ? (
                  <span className="muted">
                    {" "}
                    — violations:{" "}
                    {Object.entries(o.expectations)
                      .filter(([, n]) => n > 0)
                      .map(([name, n]) => `${name} ${formatCount(n)}`)
                      .join(", ")}
                  </span>
                ) : null}
              </td>
              <td className="num" data-testid="output-late">
                {formatCount(o.outcomes.late)}
              </td>
              <td className="num">
                {formatCount(o.stateRows)} rows{" "}
                <span className="muted small">{formatBytes(o.stateBytes)}</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The join of the batch; nothing without one. */
export function BatchJoin({ join: j }: { join: TJoinProgressView | null }) {
  if (!j) return null;
  return (
    <>
      <h3 className="section-title">Join with the dimension</h3>
      <p className="muted small">
        Each row takes the dimension&apos;s version valid at its event time. A row is joined once the
        dimension&apos;s watermark passes its time; until then it waits (state), and at the spec&apos;s
        waitFor it is joined with the newest version known (at the bound). A row with no version at its time
        is missing (emitted with the fields empty) or a dead letter{" "}
        <span className="mono">dimension_missing</span>.
      </p>
      <dl className="stats" data-testid="join">
        <JoinStat label="Joined" n={j.joined} testId="join-joined" />
        <JoinStat label="At the bound" n={j.joinedAtBound} testId="join-at-bound" hint="waitFor reached" />
        <JoinStat label="Missing" n={j.missing} testId="join-missing" hint="emitted without dimension" />
        <JoinStat
          label="Dead-lettered"
          n={j.deadLettered}
          testId="join-dead-lettered"
          hint="dimension_missing"
        />
        <div>
          <dt>Waiting for dimension</dt>
          <dd data-testid="join-waiting">
            {formatCount(j.waiting)} rows <span className="muted small">{formatBytes(j.waitingBytes)}</span>
          </dd>
        </div>
        <div>
          <dt>Dimension watermark</dt>
          <dd data-testid="join-dimension-watermark">
            <Time value={j.dimensionWatermark} />
          </dd>
        </div>
      </dl>
      <p className="muted small">
        This batch: {formatCount(j.held)} rows started waiting, {formatCount(j.released)} waiting rows
        released; changelog: {formatCount(j.dimensionRecords)} records read ({formatCount(j.dimensionBacklog)}{" "}
        unread), {formatCount(j.changes)} changes, {formatCount(j.repeats)} repeats,{" "}
        {formatCount(j.lateChanges)} late changes (kept for later rows, emitted rows unchanged),{" "}
        {formatCount(j.rejected)} rejected by the dimension&apos;s contract; {formatCount(j.versions)}{" "}
        versions kept ({formatBytes(j.versionsBytes)}).
      </p>
    </>
  );
}

function JoinStat({ label, n, hint, testId }: { label: string; n: number; hint?: string; testId: string }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd data-testid={testId}>
        {formatCount(n)}
        {hint ? <span className="muted small"> {hint}</span> : null}
      </dd>
    </div>
  );
}
