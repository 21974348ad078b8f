"use client";
// Producer faults above the request queue: values no declarable type holds (a producer's corrupt
// `amount: {…}`) are not a change anyone can approve, so they are shown as what they are — one fault
// per topic and field, however many pipelines and versions quarantined it — with the types the values
// arrived as, the rows quarantined, samples, and where it was seen. The owner teams are paged by the
// `producer_fault` alert rule. An operator who has dealt with it (the producer is fixed) dismisses it,
// which rejects the requests that recorded it, with a note.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { TProducerFault } from "@sluice/services";
import Link from "next/link";
import { useState } from "react";
import { Time } from "@/components/time";
import { useTRPC } from "@/trpc/react";

const typeSet = (types: Record<string, number>) =>
  Object.entries(types)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([t, n]) => `${t} × ${n}`)
    .join(", ") || "—";

export function ProducerFaults({ canDismiss }: { canDismiss: boolean }) {
  const trpc = useTRPC();
  const faults = useQuery({ ...trpc.change.producerFaults.queryOptions(), refetchInterval: 5_000 });
  if (!faults.data || faults.data.length === 0) return null;
  return (
    <section className="panel stack" data-testid="producer-faults" aria-label="Producer faults">
      <h2 className="panel__title">Producer faults ({faults.data.length})</h2>
      <p className="muted small">
        Values no contract type can hold: nothing here can be approved as a schema change. The rows are
        quarantined (each pipeline&apos;s dead letters, replayable once the producer is fixed) and the owner
        teams are paged (&ldquo;Producer sends values no contract type holds&rdquo;). Tell the source&apos;s
        owner; dismiss once dealt with.
      </p>
      {faults.data.map((f) => (
        <Fault key={`${f.topic}:${f.field}:${f.declaredType}`} fault={f} canDismiss={canDismiss} />
      ))}
    </section>
  );
}

function Fault({ fault: f, canDismiss }: { fault: TProducerFault; canDismiss: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [note, setNote] = useState("");
  const reject = useMutation(trpc.change.reject.mutationOptions());
  const [error, setError] = useState<string | null>(null);
  const dismiss = async () => {
    setError(null);
    try {
      for (const s of f.seenBy)
        await reject.mutateAsync({
          id: s.requestId,
          pipeline: s.pipeline,
          note: note.trim() || `producer fault on ${f.topic ?? "the topic"}: ${f.field} dismissed`,
        });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      await queryClient.invalidateQueries();
    }
  };
  return (
    <article className="stack small" data-testid={`producer-fault-${f.field}`}>
      <p>
        <span className="badge badge--bad">producer fault</span> topic{" "}
        <span className="mono">{f.topic ?? "?"}</span>: field <span className="mono">{f.field}</span>{" "}
        (declared <span className="mono">{f.declaredType ?? "?"}</span>) arrives as{" "}
        <span className="mono" data-testid="producer-fault-types">
          {typeSet(f.types)}
        </span>{" "}
        — <strong data-testid="producer-fault-rows">{f.rows}</strong> rows quarantined, first{" "}
        <Time value={f.firstSeen} />, last <Time value={f.lastSeen} />.
      </p>
      <p data-testid="producer-fault-seen-by">
        Seen by{" "}
        {f.seenBy.map((s, i) => (
          <span key={s.requestId}>
            {i > 0 ? " · " : ""}
            <Link className="mono" href={`/pipelines/${encodeURIComponent(s.pipeline)}?v=${s.version}`}>
              {s.pipeline} v{s.version}
            </Link>{" "}
            ({s.rows} rows)
          </span>
        ))}
      </p>
      {f.samples.length > 0 ? (
        <details>
          <summary>Sample rows ({f.samples.length})</summary>
          <pre className="mono small">{f.samples.map((s) => JSON.stringify(s)).join("\n")}</pre>
        </details>
      ) : null}
      {canDismiss ? (
        <div className="lifecycle__buttons">
          <input
            aria-label={`Note for dismissing the ${f.field} fault`}
            value={note}
            onChange={(e) => setNote(e.target.value)}
            maxLength={2000}
            placeholder="e.g. producer fixed in release 4.2"
          />
          <button
            type="button"
            className="button button--small"
            disabled={reject.isPending}
            onClick={() => void dismiss()}
          >
            Dismiss
          </button>
        </div>
      ) : (
        <p className="muted">Dismissing is for operators and admins.</p>
      )}
      {error ? (
        <p className="form__error" role="alert">
          {error}
        </p>
      ) : null}
    </article>
  );
}
