"use client";
// Browse a pipeline's dead letters (every version's) with filters — outcome, text in the reason,
// partition, time range, text in the payload — a page at a time, select rows (or take every row the
// filter matches), discard them with a reason, and open one to see its raw bytes beside the decoded
// payload. The filter the table shows is exactly the one an action takes (the server's
// dead-letter-filter.ts), so "discard all matching" never reaches a row that was not listed.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { TBrowsedDeadLetter, TDeadLetterFilter } from "@sluice/services";
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/trpc/react";
import { EmptyState } from "@/components/empty-state";
import { FilterSelect } from "@/components/filter-select";
import { formatCount } from "./format";
import { batchHref } from "./links";
import { Time } from "./time";

type TFilter = Omit<TDeadLetterFilter, "pipeline" | "ids">;
type TOutcome = "dead_letter" | "quarantined" | "late";
const OUTCOME_LABEL: Record<string, string> = { dead_letter: "dead letter", quarantined: "quarantined", late: "late" };
const OUTCOMES = [
  ["dead_letter", "dead letter"],
  ["quarantined", "quarantined"],
  ["late", "late"],
] as const;
const PAGE = 50;

export function DeadLetterBrowser({ pipeline }: { pipeline: string }) {
  const trpc = useTRPC();
  const [filter, setFilter] = useState<TFilter>({});
  // Keyset pages: the ids each page started below, so "Newer" goes back exactly.
  const [pages, setPages] = useState<(number | undefined)[]>([undefined]);
  const before = pages[pages.length - 1];
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [open, setOpen] = useState<number | null>(null);
  const page = useQuery({
    ...trpc.deadLetter.browse.queryOptions({ pipeline, ...filter, limit: PAGE, ...(before ? { before } : {}) }),
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
  if (page.data && page.data.rows.length === 0 && Object.keys(filter).length === 0 && pages.length === 1) return null;
  return (
    <section className="panel stack" data-testid="dead-letter-browser">
      <h3 className="section-title">Browse and inspect</h3>
      <FilterForm onApply={apply} />
      {page.isPending ? (
        <p className="muted">Loading dead letters…</p>
      ) : page.isError ? (
        <p className="form__error" role="alert">
          Could not load the dead letters: {page.error.message}
        </p>
      ) : page.data.rows.length === 0 ? (
        <EmptyState title="No row matches" next={<>Loosen the filter (clear a field, or widen the time range).</>}>
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
          <table className="table table--compact" data-testid="dead-letter-page">
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
                <th>Resolution</th>
              </tr>
            </thead>
            <tbody>
              {page.data.rows.map((r) => (
                <Row key={r.id} row={r} selected={selected.has(r.id)} onToggle={() => toggle(r.id)} onOpen={() => setOpen(open === r.id ? null : r.id)} />
              ))}
            </tbody>
          </table>
          <div className="filters">
            <button className="button button--small" type="button" disabled={pages.length <= 1} onClick={() => setPages((p) => p.slice(0, -1))}>
              Newer
            </button>
            <button className="button button--small" type="button" disabled={page.data.nextBefore === null} onClick={() => setPages((p) => [...p, page.data.nextBefore ?? undefined])}>
              Older
            </button>
          </div>
          {open !== null ? <Inspector pipeline={pipeline} id={open} onClose={() => setOpen(null)} /> : null}
          <Discard pipeline={pipeline} filter={filter} selected={[...selected]} matching={page.data.matching} onDone={() => setSelected(new Set())} />
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
      <FilterSelect label="Outcome" name="outcome" value={outcome} onChange={setOutcome} options={OUTCOMES} allLabel="any" />
      <label>
        Reason contains <input name="reasonContains" value={reasonContains} onChange={(e) => setReasonContains(e.target.value)} placeholder="e.g. should be decimal" />
      </label>
      <label>
        Partition <input name="partition" type="number" min={0} value={partition} onChange={(e) => setPartition(e.target.value)} style={{ width: "5rem" }} />
      </label>
      <label>
        From <input name="from" type="datetime-local" step={1} value={from} onChange={(e) => setFrom(e.target.value)} />
      </label>
      <label>
        To <input name="to" type="datetime-local" step={1} value={to} onChange={(e) => setTo(e.target.value)} />
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

function Row({ row: r, selected, onToggle, onOpen }: { row: TBrowsedDeadLetter; selected: boolean; onToggle: () => void; onOpen: () => void }) {
  return (
    <tr data-testid={`dead-letter-${r.id}`}>
      <td>
        <input type="checkbox" aria-label={`Select partition ${r.partition} offset ${r.offset}`} checked={selected} onChange={onToggle} />
      </td>
      <td className="num">v{r.version}</td>
      <td className="num">{r.partition}</td>
      <td className="num mono">{r.offset}</td>
      <td>{OUTCOME_LABEL[r.outcome] ?? r.outcome}</td>
      <td className="small">{r.reason}</td>
      <td className="small mono">
        <button className="button button--ghost button--small" type="button" onClick={onOpen} aria-label={`Inspect partition ${r.partition} offset ${r.offset}`}>
          {r.preview || "(empty)"}
        </button>
      </td>
      <td className="muted">
        <Time value={r.createdAt} />
      </td>
      <td className="small">{r.resolution ? `${r.resolution.action} by ${r.resolution.actor}` : <span className="muted">open</span>}</td>
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
          <p className="small">
            {OUTCOME_LABEL[row.data.outcome] ?? row.data.outcome}: <span data-testid="inspector-reason">{row.data.reason}</span>
            <br />
            topic <code>{row.data.topic}</code>, partition {row.data.partition}, offset {row.data.offset}
            {row.data.key !== null ? (
              <>
                , key <code>{row.data.key}</code>
              </>
            ) : null}{" "}
            · version {row.data.version},{" "}
            <Link href={batchHref(pipeline, row.data.batchId, row.data.version)}>batch {row.data.batchId}</Link> · Kafka time <Time value={row.data.ingestTime} />
            {row.data.resolution ? (
              <>
                <br />
                {row.data.resolution.action} by {row.data.resolution.actor} <Time value={row.data.resolution.at} />: {row.data.resolution.reason}
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
            Raw bytes — {formatCount(row.data.bytes)} byte(s){row.data.truncated ? " kept (the record was larger: only its first 64 KiB were kept)" : ""},{" "}
            {row.data.validUtf8 ? "valid UTF-8" : "not valid UTF-8"}
          </h4>
          <pre className="mono small" data-testid="inspector-hex" style={{ maxHeight: "16rem", overflow: "auto" }}>
            {row.data.hex.join("\n")}
          </pre>
          <h4 className="small strong">As text</h4>
          <pre className="mono small" data-testid="inspector-text" style={{ maxHeight: "10rem", overflow: "auto", whiteSpace: "pre-wrap" }}>
            {row.data.text}
          </pre>
        </>
      )}
    </div>
  );
}

function Discard({ pipeline, filter, selected, matching, onDone }: { pipeline: string; filter: TFilter; selected: number[]; matching: number; onDone: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const may = useQuery(trpc.pipeline.may.queryOptions({ pipeline }));
  const [reason, setReason] = useState("");
  const discard = useMutation(
    trpc.deadLetter.discard.mutationOptions({
      onSuccess: () => {
        onDone();
        return queryClient.invalidateQueries();
      },
    }),
  );
  const allowed = may.data?.["deadletter.discard"];
  if (!allowed) return null;
  if (!allowed.ok) return <p className="muted small">{allowed.message}</p>;
  const narrows = Object.keys(filter).length > 0;
  const run = (which: "selected" | "matching") => discard.mutate({ pipeline, reason, ...filter, ...(which === "selected" ? { ids: selected } : {}) });
  return (
    <div className="stack" data-testid="discard-dead-letters">
      <p className="muted small">
        Discard rows that will never be replayed (a producer bug since fixed, test data). They stay in the table for the record; who discarded them,
        when and why is kept with each row and in the audit log.
      </p>
      <div className="filters">
        <label>
          Why <input name="discardReason" value={reason} onChange={(e) => setReason(e.target.value)} maxLength={2000} placeholder="recorded with your name" />
        </label>
        <button className="button button--small" type="button" disabled={discard.isPending || selected.length === 0 || !reason.trim()} onClick={() => run("selected")}>
          Discard {selected.length} selected
        </button>
        <button
          className="button button--small"
          type="button"
          disabled={discard.isPending || !narrows || !reason.trim()}
          title={narrows ? undefined : "Filter first: discarding every row needs at least an outcome"}
          onClick={() => run("matching")}
        >
          Discard all {formatCount(matching)} matching
        </button>
      </div>
      {discard.isError ? (
        <p className="form__error" role="alert">
          {discard.error.message}
        </p>
      ) : null}
      {discard.isSuccess ? (
        <p className="notice small" role="status">
          Discarded {discard.data.discarded} row(s){discard.data.alreadyResolved ? `; ${discard.data.alreadyResolved} were resolved before` : ""}
          {discard.data.more ? "; more rows match: discard again for the next 10,000" : ""}.
        </p>
      ) : null}
    </div>
  );
}
