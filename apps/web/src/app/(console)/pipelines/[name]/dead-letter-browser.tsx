"use client";
// Browse a pipeline's dead letters (every version's) with filters — outcome, a reason group (from the
// summary's "Show rows"), text in the reason, partition, time range, text in the payload — a page at a
// time, with each row's replay status; select rows (or take every row the filter matches) and replay
// them through the serving version or discard them, with a reason; open one to see its raw bytes beside
// the decoded payload. The filter the table shows is exactly the one an action takes (the server's
// dead-letter-filter.ts), so "… all matching" never reaches a row that was not listed. Which rows a
// replay may take is the server's decision: it refuses the others, each naming why.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { TBrowsedDeadLetter, TDeadLetterFilter, TDeadLetterSummary } from "@sluice/services";
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/trpc/react";
import { EmptyState } from "@/components/empty-state";
import { FilterSelect } from "@/components/filter-select";
import { formatCount } from "@/lib/format";
import { DeadLetters, type TReasonGroupChoice } from "./dead-letters";
import { batchHref } from "./links";
import { Time } from "@/components/time";
import { WhyDisabled } from "@/components/why-disabled";

type TFilter = Omit<TDeadLetterFilter, "pipeline" | "ids">;
type TOutcome = "dead_letter" | "quarantined" | "late";
const OUTCOME_LABEL: Record<string, string> = {
  dead_letter: "dead letter",
  quarantined: "quarantined",
  late: "late",
};
const OUTCOMES = [
  ["dead_letter", "dead letter"],
  ["quarantined", "quarantined"],
  ["late", "late"],
] as const;
const PAGE = 50;

/** The dead letters section: the summary, and the rows below it (narrowed to a reason group on "Show rows"). */
export function DeadLettersPanel({ pipeline, summary }: { pipeline: string; summary: TDeadLetterSummary }) {
  const [group, setGroup] = useState<TReasonGroupChoice | null>(null);
  return (
    <DeadLetters summary={summary} onShowGroup={setGroup}>
      {/* A new group starts a fresh browse (its own filter form, first page, no selection). */}
      <DeadLetterBrowser
        key={group ? `${group.outcome}:${group.reason}` : "all"}
        pipeline={pipeline}
        group={group}
        onClearGroup={() => setGroup(null)}
      />
    </DeadLetters>
  );
}

function DeadLetterBrowser({
  pipeline,
  group,
  onClearGroup,
}: {
  pipeline: string;
  group: TReasonGroupChoice | null;
  onClearGroup: () => void;
}) {
  const trpc = useTRPC();
  const [formFilter, setFilter] = useState<TFilter>({});
  const filter: TFilter = group
    ? { ...formFilter, outcome: group.outcome, reasonGroup: group.reason }
    : formFilter;
  // Keyset pages: the ids each page started below, so "Newer" goes back exactly.
  const [pages, setPages] = useState<(number | undefined)[]>([undefined]);
  const before = pages[pages.length - 1];
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [open, setOpen] = useState<number | null>(null);
  const page = useQuery({
    ...trpc.deadLetter.browse.queryOptions({
      pipeline,
      ...filter,
      limit: PAGE,
      ...(before ? { before } : {}),
    }),
    placeholderData: keepPreviousData,
    refetchInterval: 15_000,
  });

  const apply = (next: TFilter) => {
    setFilter(next);
    setPages([undefined]);
    setSelected(new Set());
  };
  const toggle = (id: number) =>
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });

  // Nothing at all (no filter, no row in any version): the summary above already says so.
  if (page.data && page.data.rows.length === 0 && Object.keys(filter).length === 0 && pages.length === 1)
    return null;
  return (
    <section className="panel stack" data-testid="dead-letter-browser">
      <h3 className="section-title">Browse and inspect</h3>
      {group ? (
        <p className="small" data-testid="dead-letter-group">
          Rows with reason <strong>{group.reason}</strong> ({OUTCOME_LABEL[group.outcome]}, every version){" "}
          <button type="button" className="button button--small" onClick={onClearGroup}>
            Show every reason
          </button>
        </p>
      ) : null}
      <FilterForm onApply={apply} />
      {page.isPending ? (
        <p className="muted">Loading dead letters…</p>
      ) : page.isError ? (
        <p className="form__error" role="alert">
          Could not load the dead letters: {page.error.message}
        </p>
      ) : page.data.rows.length === 0 ? (
        <EmptyState
          title="No row matches"
          next={<>Loosen the filter (clear a field, or widen the time range).</>}
        >
          <p>No dead letter of {pipeline} matches this filter.</p>
        </EmptyState>
      ) : (
        <>
          <p className="small" data-testid="dead-letter-matching">
            <span className="strong">
              {page.data.countCapped ? "more than " : ""}
              {formatCount(page.data.matching)}
            </span>{" "}
            row(s) match · {selected.size} selected
          </p>
          <table className="table table--compact dead-letters-table" data-testid="dead-letter-page">
            <thead>
              <tr>
                <th aria-label="Select" />
                <th className="num">Version</th>
                <th className="num">Partition</th>
                <th className="num">Offset</th>
                <th>Outcome</th>
                <th>Reason</th>
                <th>Payload</th>
                <th>Written</th>
                <th>Replay / resolution</th>
              </tr>
            </thead>
            <tbody>
              {page.data.rows.map((r) => (
                <Row
                  key={r.id}
                  row={r}
                  selected={selected.has(r.id)}
                  onToggle={() => toggle(r.id)}
                  onOpen={() => setOpen(open === r.id ? null : r.id)}
                />
              ))}
            </tbody>
          </table>
          <div className="filters">
            <button
              className="button button--small"
              type="button"
              disabled={pages.length <= 1}
              onClick={() => setPages((p) => p.slice(0, -1))}
            >
              Newer
            </button>
            <button
              className="button button--small"
              type="button"
              disabled={page.data.nextBefore === null}
              onClick={() => setPages((p) => [...p, page.data.nextBefore ?? undefined])}
            >
              Older
            </button>
          </div>
          {open !== null ? <Inspector pipeline={pipeline} id={open} onClose={() => setOpen(null)} /> : null}
          <RowActions
            pipeline={pipeline}
            filter={filter}
            selected={[...selected]}
            matching={page.data.matching}
            onDone={() => setSelected(new Set())}
          />
        </>
      )}
    </section>
  );
}

function FilterForm({ onApply }: { onApply: (f: TFilter) => void }) {
  const [outcome, setOutcome] = useState<TOutcome | "">("");
  const [reasonContains, setReasonContains] = useState("");
  const [partition, setPartition] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [text, setText] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onApply({
      ...(outcome ? { outcome } : {}),
      ...(reasonContains.trim() ? { reasonContains: reasonContains.trim() } : {}),
      ...(partition !== "" ? { partition: Number(partition) } : {}),
      // datetime-local is the browser's local time; the server compares instants.
      ...(from ? { from: new Date(from) } : {}),
      ...(to ? { to: new Date(to) } : {}),
      ...(text.trim() ? { text: text.trim() } : {}),
    });
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="Filter dead letters">
      <FilterSelect
        label="Outcome"
        name="outcome"
        value={outcome}
        onChange={setOutcome}
        options={OUTCOMES}
        allLabel="any"
      />
      <label>
        Reason contains{" "}
        <input
          name="reasonContains"
          value={reasonContains}
          onChange={(e) => setReasonContains(e.target.value)}
          placeholder="e.g. should be decimal"
        />
      </label>
      <label>
        Partition{" "}
        <input
          name="partition"
          type="number"
          min={0}
          value={partition}
          onChange={(e) => setPartition(e.target.value)}
          style={{ width: "5rem" }}
        />
      </label>
      <label>
        From{" "}
        <input
          name="from"
          type="datetime-local"
          step={1}
          value={from}
          onChange={(e) => setFrom(e.target.value)}
        />
      </label>
      <label>
        To{" "}
        <input name="to" type="datetime-local" step={1} value={to} onChange={(e) => setTo(e.target.value)} />
      </label>
      <label>
        Payload contains <input name="text" value={text} onChange={(e) => setText(e.target.value)} />
      </label>
      <button className="button button--small button--primary" type="submit">
        Filter
      </button>
    </form>
  );
}

function Row({
  row: r,
  selected,
  onToggle,
  onOpen,
}: {
  row: TBrowsedDeadLetter;
  selected: boolean;
  onToggle: () => void;
  onOpen: () => void;
}) {
  return (
    <tr data-testid={`dead-letter-${r.id}`}>
      <td>
        <input
          type="checkbox"
          aria-label={`Select dead letter ${r.id} (partition ${r.partition}, offset ${r.offset})`}
          checked={selected}
          onChange={onToggle}
          disabled={!actionable(r)}
        />
      </td>
      <td className="num">v{r.version}</td>
      <td className="num">{r.partition}</td>
      <td className="num mono">{r.offset}</td>
      <td>{OUTCOME_LABEL[r.outcome] ?? r.outcome}</td>
      <td className="small">
        <div className="clamp-3" title={r.reason}>
          {r.reason}
        </div>
      </td>
      <td className="small mono">
        <button
          className="button button--ghost button--small dead-letter__preview"
          type="button"
          onClick={onOpen}
          aria-label={`Inspect partition ${r.partition} offset ${r.offset}`}
        >
          {r.preview || "(empty)"}
        </button>
      </td>
      <td className="muted nowrap">
        <Time value={r.createdAt} />
      </td>
      <td className="small" data-testid="dead-letter-replay-status">
        <RowStatus row={r} />
      </td>
    </tr>
  );
}

function Inspector({ pipeline, id, onClose }: { pipeline: string; id: number; onClose: () => void }) {
  const trpc = useTRPC();
  const row = useQuery(trpc.deadLetter.inspect.queryOptions({ pipeline, id }));
  return (
    <div className="panel stack" data-testid="dead-letter-inspector" role="region" aria-label="Dead letter">
      <div className="filters">
        <strong>Dead letter #{id}</strong>
        <button className="button button--small" type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {row.isPending ? (
        <p className="muted">Loading…</p>
      ) : row.isError ? (
        <p className="form__error" role="alert">
          {row.error.message}
        </p>
      ) : (
        <>
          <p className="small wrap-anywhere">
            {OUTCOME_LABEL[row.data.outcome] ?? row.data.outcome}:{" "}
            <span data-testid="inspector-reason">{row.data.reason}</span>
            <br />
            topic <code>{row.data.topic}</code>, partition {row.data.partition}, offset {row.data.offset}
            {row.data.key !== null ? (
              <>
                , key <code>{row.data.key}</code>
              </>
            ) : null}{" "}
            · version {row.data.version},{" "}
            <Link href={batchHref(pipeline, row.data.batchId, row.data.version)}>
              batch {row.data.batchId}
            </Link>{" "}
            · Kafka time <Time value={row.data.ingestTime} />
            {row.data.resolution ? (
              <>
                <br />
                {row.data.resolution.action} by {row.data.resolution.actor}{" "}
                <Time value={row.data.resolution.at} />: {row.data.resolution.reason}
              </>
            ) : null}
          </p>
          <h4 className="small strong">Decoded payload</h4>
          {row.data.payload === null ? (
            <p className="muted small">Not decoded: the bytes are not a JSON object (see the reason).</p>
          ) : (
            <pre className="mono small" data-testid="inspector-payload">
              {JSON.stringify(row.data.payload, null, 2)}
            </pre>
          )}
          <h4 className="small strong">
            Raw bytes — {formatCount(row.data.bytes)} byte(s)
            {row.data.truncated ? " kept (the record was larger: only its first 64 KiB were kept)" : ""},{" "}
            {row.data.validUtf8 ? "valid UTF-8" : "not valid UTF-8"}
          </h4>
          <pre
            className="mono small"
            data-testid="inspector-hex"
            style={{ maxHeight: "16rem", overflow: "auto" }}
          >
            {row.data.hex.join("\n")}
          </pre>
          <h4 className="small strong">As text</h4>
          <pre
            className="mono small"
            data-testid="inspector-text"
            style={{ maxHeight: "10rem", overflow: "auto", whiteSpace: "pre-wrap" }}
          >
            {row.data.text}
          </pre>
        </>
      )}
    </div>
  );
}

/** Outcomes of a replayed row that leave it a dead letter still (it may be replayed again, or discarded). */
const STILL_DEAD = ["quarantined", "dead_letter", "late", "refused"];

/** A row can be chosen unless it was discarded, is waiting to be replayed, or reached the result in a replay. */
const actionable = (r: TBrowsedDeadLetter) =>
  !r.resolution &&
  (!r.replay || (r.replay.status === "applied" && STILL_DEAD.includes(r.replay.outcome ?? "")));

function RowStatus({ row: r }: { row: TBrowsedDeadLetter }) {
  if (r.resolution)
    return (
      <span className="muted">
        {r.resolution.action} by {r.resolution.actor} <Time value={r.resolution.at} />
      </span>
    );
  if (!r.replay) return <span className="muted">open</span>;
  if (r.replay.status === "pending")
    return (
      <span>
        replay pending (request #{r.replay.replayId} by {r.replay.by}, <Time value={r.replay.at} />)
      </span>
    );
  return (
    <span>
      replayed into batch {r.replay.batchId}
      {r.replay.version !== null ? ` of v${r.replay.version}` : ""} by {r.replay.by}{" "}
      <Time value={r.replay.at} />: <strong>{r.replay.outcome}</strong>
      {r.replay.detail ? <span className="muted"> — {r.replay.detail}</span> : null}
    </span>
  );
}

/** Replay or discard the selected rows, or every row the filter matches, with one reason. */
function RowActions({
  pipeline,
  filter,
  selected,
  matching,
  onDone,
}: {
  pipeline: string;
  filter: TFilter;
  selected: number[];
  matching: number;
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const may = useQuery(trpc.pipeline.may.queryOptions({ pipeline }));
  const [reason, setReason] = useState("");
  const settled = {
    onSuccess: () => {
      onDone();
      return queryClient.invalidateQueries();
    },
  };
  const discard = useMutation(trpc.deadLetter.discard.mutationOptions(settled));
  const replay = useMutation(trpc.deadLetter.replay.mutationOptions(settled));
  const canDiscard = may.data?.["deadletter.discard"];
  const canReplay = may.data?.["deadletter.replay"];
  if (!canDiscard || !canReplay) return null;
  if (!canDiscard.ok && !canReplay.ok) return <p className="muted small">{canReplay.message}</p>;
  const narrows = Object.keys(filter).length > 0;
  const which = (rows: "selected" | "matching") => ({
    pipeline,
    ...filter,
    ...(rows === "selected" ? { ids: selected } : {}),
  });
  const busy = discard.isPending || replay.isPending;
  const noReason = !reason.trim();
  // What the disabled buttons wait for, said beside them (not only on hover).
  const why =
    [
      noReason ? "give a reason (Why)" : null,
      selected.length === 0 ? "select rows for the “selected” buttons" : null,
      narrows ? null : "filter by at least an outcome for the “all matching” ones",
    ]
      .filter(Boolean)
      .join("; ") || null;
  return (
    <div className="stack" data-testid="dead-letter-actions">
      <p className="muted small">
        <strong>Replay</strong> sends the rows through the serving version&apos;s contract, expectations and
        sink in the pipeline&apos;s own next batch (offsets and watermark unchanged): each row reaches the
        result at most once, and rows that cannot be applied correctly — already replayed, discarded,
        truncated, or with a window already final and evicted — are refused, each with why.{" "}
        <strong>Discard</strong> is for rows that will never be replayed; they stay in the table for the
        record. Who did either, when and why is kept with each row and in the audit log.
      </p>
      <div className="filters">
        <label>
          Why{" "}
          <input
            name="actionReason"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            maxLength={2000}
            placeholder="recorded with your name"
          />
        </label>
        {canReplay.ok ? (
          <>
            <button
              className="button button--small button--primary"
              type="button"
              disabled={busy || selected.length === 0 || noReason}
              aria-describedby={why ? "dead-letter-actions-why" : undefined}
              onClick={() => replay.mutate({ ...which("selected"), note: reason })}
            >
              Replay {selected.length} selected
            </button>
            <button
              className="button button--small"
              type="button"
              disabled={busy || !narrows || noReason}
              aria-describedby={why ? "dead-letter-actions-why" : undefined}
              onClick={() => replay.mutate({ ...which("matching"), note: reason })}
            >
              Replay all {formatCount(matching)} matching
            </button>
          </>
        ) : null}
        {canDiscard.ok ? (
          <>
            <button
              className="button button--small"
              type="button"
              disabled={busy || selected.length === 0 || noReason}
              aria-describedby={why ? "dead-letter-actions-why" : undefined}
              onClick={() => discard.mutate({ ...which("selected"), reason })}
            >
              Discard {selected.length} selected
            </button>
            <button
              className="button button--small"
              type="button"
              disabled={busy || !narrows || noReason}
              aria-describedby={why ? "dead-letter-actions-why" : undefined}
              onClick={() => discard.mutate({ ...which("matching"), reason })}
            >
              Discard all {formatCount(matching)} matching
            </button>
          </>
        ) : null}
      </div>
      <WhyDisabled id="dead-letter-actions-why" reason={why ? `To act on rows: ${why}.` : null} />
      {replay.isError || discard.isError ? (
        <p className="form__error" role="alert">
          {(replay.error ?? discard.error)?.message}
        </p>
      ) : null}
      {replay.isSuccess ? (
        <div className="notice small" role="status" data-testid="replay-result">
          <p>
            {replay.data.accepted > 0
              ? `Replay #${replay.data.replayId}: ${replay.data.accepted} row(s) queued into version ${replay.data.version}; the next batch applies them.`
              : "Nothing was queued."}
            {replay.data.refused.length > 0 ? ` ${replay.data.refused.length} refused:` : ""}
            {replay.data.more ? " More rows match: replay again for the next 10,000." : ""}
          </p>
          {replay.data.refused.length > 0 ? (
            <ul>
              {replay.data.refused.slice(0, 50).map((r) => (
                <li key={r.id}>
                  #{r.id}: {r.why}
                </li>
              ))}
              {replay.data.refused.length > 50 ? (
                <li>… and {replay.data.refused.length - 50} more (the audit event keeps the first 100)</li>
              ) : null}
            </ul>
          ) : null}
        </div>
      ) : null}
      {discard.isSuccess ? (
        <p className="notice small" role="status" data-testid="discard-result">
          Discarded {discard.data.discarded} row(s)
          {discard.data.alreadyResolved
            ? `; ${discard.data.alreadyResolved} were resolved or waiting to be replayed`
            : ""}
          {discard.data.more ? "; more rows match: discard again for the next 10,000" : ""}.
        </p>
      ) : null}
    </div>
  );
}
