"use client";
// A team's contact points on the Admin page: every enabled one is paged when the team's alerts fire,
// are acknowledged or resolve. Each shows its target (never a stored secret), its delivery health
// (last delivery, last error, retries in flight) and recent history, a "Send test notification"
// button answered in place, and a form to add or change one.
import type { TContactPointKind, TContactPointView } from "@sluice/services";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/trpc/react";
import { Outcome, useAdminRefresh, useMutation, useOutcome } from "./admin-controls";

const KINDS: { kind: TContactPointKind; label: string; secret: string | null; placeholder: string }[] = [
  {
    kind: "slack",
    label: "Slack (incoming webhook)",
    secret: "Webhook URL",
    placeholder: "https://hooks.slack.com/services/…",
  },
  {
    kind: "pagerduty",
    label: "PagerDuty (Events API v2)",
    secret: "Routing key",
    placeholder: "32-character integration key",
  },
  { kind: "email", label: "Email (SMTP)", secret: null, placeholder: "" },
  {
    kind: "webhook",
    label: "Webhook (Sluice's JSON event)",
    secret: "URL",
    placeholder: "https://hooks.example.com/…",
  },
];

const when = (d: Date | null) => (d ? new Date(d).toLocaleString() : "never");

export function ContactPoints({
  teamId,
  teamName,
  points,
}: {
  teamId: string;
  teamName: string;
  points: TContactPointView[];
}) {
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <div className="contact-points" data-testid="contact-points">
      <h3 className="small strong">Contact points — who is paged</h3>
      {points.length === 0 ? (
        <p className="warn small" role="status">
          No contact point: {teamName}&apos;s alerts page nobody. Add one below (Slack, PagerDuty, email or a
          webhook).
        </p>
      ) : (
        points.map((p) =>
          editing === p.id ? (
            <ContactPointForm key={p.id} teamId={teamId} point={p} onDone={() => setEditing(null)} />
          ) : (
            <ContactPointCard key={p.id} point={p} onEdit={() => setEditing(p.id)} />
          ),
        )
      )}
      {editing === "new" ? (
        <ContactPointForm teamId={teamId} point={null} onDone={() => setEditing(null)} />
      ) : (
        <button className="button button--small" type="button" onClick={() => setEditing("new")}>
          Add a contact point
        </button>
      )}
    </div>
  );
}

function ContactPointCard({ point: p, onEdit }: { point: TContactPointView; onEdit: () => void }) {
  const trpc = useTRPC();
  const refresh = useAdminRefresh();
  const { outcome, ok, fail } = useOutcome();
  const test = useMutation(
    trpc.admin.testContactPoint.mutationOptions({
      onSuccess: (r) =>
        r.delivered
          ? ok(`Test delivered${r.status ? ` (HTTP ${r.status})` : ""}.`)
          : fail({ message: `Test not delivered: ${r.error}` }),
      onError: fail,
      onSettled: refresh,
    }),
  );
  const remove = useMutation(
    trpc.admin.removeContactPoint.mutationOptions({ onError: fail, onSettled: refresh }),
  );
  const target = p.kind === "email" ? `to ${p.addresses.join(", ")}` : p.target;
  return (
    <div className="contact-point" data-testid={`contact-point-${p.name}`}>
      <div className="webhook__head">
        <span className="strong">{p.name}</span>
        <span className="badge">{KINDS.find((k) => k.kind === p.kind)?.label ?? p.kind}</span>
        {p.enabled ? null : <span className="badge badge--warn">disabled: not paged</span>}
        <span className="muted small wrap-anywhere">
          {target}
          {p.endpoint ? ` · events to ${p.endpoint}` : ""}
        </span>
      </div>
      <p className="small">
        Last delivered: {when(p.lastDeliveredAt)}
        {p.retrying > 0 ? <span className="warn"> · {p.retrying} retrying</span> : null}
        {p.lastError ? (
          <span className="bad wrap-anywhere">
            {" "}
            · last error {when(p.lastError.at)}: {p.lastError.error}
          </span>
        ) : null}
      </p>
      <div className="webhook__actions">
        <button
          className="button button--small"
          type="button"
          disabled={test.isPending}
          onClick={() => test.mutate({ id: p.id })}
        >
          {test.isPending ? "Sending…" : "Send test notification"}
        </button>
        <button className="button button--small" type="button" onClick={onEdit}>
          Change
        </button>
        <button
          className="button button--small"
          type="button"
          disabled={remove.isPending}
          onClick={() => remove.mutate({ id: p.id })}
        >
          Remove
        </button>
      </div>
      <Outcome outcome={outcome} />
      {p.history.length > 0 ? (
        <details>
          <summary className="small">Delivery history ({p.history.length} latest)</summary>
          <table className="table table--compact">
            <thead>
              <tr>
                <th>When</th>
                <th>What</th>
                <th>Status</th>
                <th>Attempts</th>
                <th>Last error</th>
              </tr>
            </thead>
            <tbody>
              {p.history.map((h) => (
                <tr key={h.id}>
                  <td className="small">{when(h.lastAttemptAt ?? h.createdAt)}</td>
                  <td className="small">{h.alertId ? `${h.kind} · alert #${h.alertId}` : h.kind}</td>
                  <td className="small">
                    {h.status}
                    {h.status === "pending" ? ` (next try ${when(h.nextAttemptAt)})` : ""}
                  </td>
                  <td className="small">{h.attempts}</td>
                  <td className="small wrap-anywhere">{h.lastError ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ) : (
        <p className="muted small">Nothing sent yet: send a test notification to check it works.</p>
      )}
    </div>
  );
}

function ContactPointForm({
  teamId,
  point,
  onDone,
}: {
  teamId: string;
  point: TContactPointView | null;
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const refresh = useAdminRefresh();
  const { outcome, fail } = useOutcome();
  const [name, setName] = useState(point?.name ?? "");
  const [kind, setKind] = useState<TContactPointKind>(point?.kind ?? "slack");
  const [from, setFrom] = useState<"keep" | "env" | "value">(
    point && point.kind !== "email" ? "keep" : "value",
  );
  const [secret, setSecret] = useState("");
  const [endpoint, setEndpoint] = useState(point?.endpoint ?? "");
  const [addresses, setAddresses] = useState(point?.addresses.join(", ") ?? "");
  const [enabled, setEnabled] = useState(point?.enabled ?? true);
  const options = { onSuccess: onDone, onError: fail, onSettled: refresh };
  const create = useMutation(trpc.admin.createContactPoint.mutationOptions(options));
  const update = useMutation(trpc.admin.updateContactPoint.mutationOptions(options));
  const info = KINDS.find((k) => k.kind === kind)!;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const contactPoint = {
      name,
      kind,
      secret:
        kind === "email" || from === "keep"
          ? { from: "keep" as const }
          : from === "env"
            ? { from: "env" as const, name: secret }
            : { from: "value" as const, value: secret },
      endpoint: kind === "pagerduty" ? endpoint : "",
      addresses: kind === "email" ? addresses.split(/[\s,;]+/).filter(Boolean) : [],
      enabled,
    };
    if (point) update.mutate({ id: point.id, contactPoint });
    else create.mutate({ teamId, contactPoint });
  };
  return (
    <form
      className="admin-form contact-point"
      onSubmit={submit}
      noValidate
      aria-label={point ? `Change ${point.name}` : "Add a contact point"}
    >
      <label>
        <span>Name</span>
        <input value={name} onChange={(e) => setName(e.target.value)} placeholder="#payments-oncall" />
      </label>
      <label>
        <span>Kind</span>
        <select value={kind} onChange={(e) => setKind(e.target.value as TContactPointKind)}>
          {KINDS.map((k) => (
            <option key={k.kind} value={k.kind}>
              {k.label}
            </option>
          ))}
        </select>
      </label>
      {info.secret ? (
        <>
          <label>
            <span>{info.secret} from</span>
            <select value={from} onChange={(e) => setFrom(e.target.value as typeof from)}>
              {point && point.kind === kind ? (
                <option value="keep">keep as it is ({point.target})</option>
              ) : null}
              <option value="value">entered here (stored as a secret, never shown again)</option>
              <option value="env">an environment variable on the workers and console</option>
            </select>
          </label>
          {from !== "keep" ? (
            <label>
              <span>{from === "env" ? "Variable name" : info.secret}</span>
              <input
                type={from === "value" ? "password" : "text"}
                autoComplete="off"
                value={secret}
                onChange={(e) => setSecret(e.target.value)}
                placeholder={from === "env" ? "PAYMENTS_ONCALL_SECRET" : info.placeholder}
              />
            </label>
          ) : null}
        </>
      ) : (
        <label>
          <span>Recipients</span>
          <input
            value={addresses}
            onChange={(e) => setAddresses(e.target.value)}
            placeholder="payments-oncall@example.com"
          />
        </label>
      )}
      {kind === "pagerduty" ? (
        <label>
          <span>Events API address (empty: PagerDuty&apos;s)</span>
          <input
            value={endpoint}
            onChange={(e) => setEndpoint(e.target.value)}
            placeholder="https://events.pagerduty.com/v2/enqueue"
          />
        </label>
      ) : null}
      <label className="admin-form__check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        <span>paged (enabled)</span>
      </label>
      <button
        className="button button--small button--primary"
        type="submit"
        disabled={create.isPending || update.isPending}
      >
        {point ? "Save" : "Add"}
      </button>
      <button className="button button--small" type="button" onClick={onDone}>
        Cancel
      </button>
      <Outcome outcome={outcome} />
    </form>
  );
}
