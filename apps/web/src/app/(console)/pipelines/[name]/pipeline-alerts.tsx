"use client";
// A pipeline's alerts, at the top of its page: what is firing now (with acknowledge / resolve /
// silence), its active silences (un-silence), its rules — editable by its owner team — and its alert
// history with every event (fired, notified, acknowledged, resolved, by whom). Alerts follow the
// serving version (each says the version it fired on); on another version's page that is said first.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { TAlertRuleView, TPipelineAlerts } from "@sluice/services";
import { formatRuleValue } from "@sluice/services/alerts/pure";
import { useState } from "react";
import { formatClock } from "@/lib/format";
import { useTRPC } from "@/trpc/react";
import { NOT_ALLOWED, useAlertMutations } from "../../alerts/alert-actions";
import { AlertRow } from "../../alerts/alert-row";
import { OutputRuleForm } from "./output-rule-form";
import { ThresholdInput } from "./threshold-input";

const REFRESH_MS = 5_000;

export function PipelineAlerts({
  pipeline,
  canRespond,
  canEditRules,
  shownVersion,
  servingVersion,
}: {
  pipeline: string;
  canRespond: boolean;
  canEditRules: boolean;
  shownVersion?: number;
  servingVersion?: number | null;
}) {
  const trpc = useTRPC();
  const alerts = useQuery({
    ...trpc.alert.forPipeline.queryOptions({ pipeline }),
    refetchInterval: REFRESH_MS,
  });
  if (alerts.isPending) return <p className="muted">Loading alerts…</p>;
  if (alerts.isError)
    return (
      <p className="form__error" role="alert">
        Could not load the pipeline&apos;s alerts: {alerts.error.message}
      </p>
    );
  const a = alerts.data;
  return (
    <section className="panel" id="alerts" data-testid="pipeline-alerts">
      <h2 className="panel__title">
        Alerts{" "}
        <span
          className={a.open.length > 0 ? "badge badge--bad" : "badge badge--ok"}
          data-testid="pipeline-alerts-open"
        >
          {a.open.length > 0 ? `${a.open.length} open` : "nothing firing"}
        </span>
      </h2>
      {shownVersion !== undefined && servingVersion != null && shownVersion !== servingVersion ? (
        <p className="notice small" data-testid="alerts-follow-serving">
          Alerts are evaluated on the serving version, v{servingVersion}: those here are its (each names the
          version it fired on). Version {shownVersion}, shown on this page, has no alerts of its own.
        </p>
      ) : null}
      {a.open.length > 0 ? (
        <ul className="alerts" data-testid="pipeline-alerts-list">
          {a.open.map((x) => (
            <AlertRow key={x.id} alert={x} canRespond={canRespond} />
          ))}
        </ul>
      ) : null}
      <Silences data={a} canRespond={canRespond} />
      <details data-testid="alert-rules">
        <summary className="strong">
          Rules ({a.rules.filter((r) => r.enabled).length} of {a.rules.length} on)
        </summary>
        {a.rules.length === 0 ? (
          <p className="muted small">
            The default rules are created on the workers&apos; next alert evaluation (within seconds once a
            worker runs).
          </p>
        ) : (
          <table className="table">
            <thead>
              <tr>
                <th>Rule</th>
                <th>Severity</th>
                <th>Threshold</th>
                <th className="num">For (s)</th>
                <th className="num">Clear for (s)</th>
                <th className="num">Remind (s)</th>
                <th>On</th>
                <th>Last value</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {a.rules.map((r) => (
                <RuleRow key={r.id} pipeline={pipeline} rule={r} canEdit={canEditRules} />
              ))}
            </tbody>
          </table>
        )}
        {!canEditRules ? (
          <p className="muted small">
            Only the owners of this pipeline&apos;s team (and admins) change its rules.
          </p>
        ) : a.outputs.length > 0 ? (
          <OutputRuleForm pipeline={pipeline} outputs={a.outputs} />
        ) : null}
      </details>
      <details data-testid="alert-history">
        <summary className="strong">History ({a.history.length})</summary>
        {a.history.length === 0 ? (
          <p className="muted small">No alert has fired for this pipeline.</p>
        ) : (
          <ul className="alert-history">
            {a.history.map((h) => (
              <li key={h.id}>
                <span className="mono">#{h.id}</span> {h.title} — {h.state}
                <ul className="small muted">
                  {h.events.map((e, i) => (
                    <li key={i}>
                      {formatClock(e.at)} {e.type} by {e.actor}
                      {e.note ? `: ${e.note}` : ""}
                    </li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
        )}
      </details>
    </section>
  );
}

function Silences({ data, canRespond }: { data: TPipelineAlerts; canRespond: boolean }) {
  const { unsilence } = useAlertMutations();
  if (data.silences.length === 0) return null;
  return (
    <div data-testid="alert-silences">
      <h3 className="section-title">Silenced</h3>
      <ul>
        {data.silences.map((s) => (
          <li key={s.id} className="small" data-testid={`silence-${s.id}`}>
            {s.kind ?? "all rules"} until {formatClock(s.expiresAt)} by {s.createdBy}: {s.reason}{" "}
            <button
              type="button"
              className="button button--small"
              disabled={!canRespond || unsilence.isPending}
              title={canRespond ? undefined : NOT_ALLOWED}
              onClick={() => unsilence.mutate({ silenceId: s.id, pipeline: data.pipeline })}
            >
              Un-silence
            </button>
          </li>
        ))}
      </ul>
      {unsilence.error ? (
        <p className="form__error" role="alert">
          {unsilence.error.message}
        </p>
      ) : null}
    </div>
  );
}

function RuleRow({
  pipeline,
  rule: r,
  canEdit,
}: {
  pipeline: string;
  rule: TAlertRuleView;
  canEdit: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [threshold, setThreshold] = useState(r.threshold === null ? "" : String(r.threshold));
  const [forSeconds, setFor] = useState(String(r.forSeconds));
  const [clearFor, setClearFor] = useState(String(r.clearForSeconds));
  const [enabled, setEnabled] = useState(r.enabled);
  const save = useMutation(
    trpc.alert.updateRule.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.alert.pathKey() }),
    }),
  );
  const num = (s: string) => (s.trim() === "" ? Number.NaN : Number(s));
  /** The kind, and the output for a rule watching one ("late_rate-fraud"). */
  const ruleKey = r.output === null ? r.kind : `${r.kind}-${r.output}`;
  return (
    <tr data-testid={`rule-${ruleKey}`} className={r.pending ? "row--problem" : undefined}>
      <td title={r.unit}>
        {r.title}
        {r.pending ? <span className="muted small"> (pending)</span> : null}
      </td>
      <td>{r.severity}</td>
      <td>
        <ThresholdInput
          kind={r.kind}
          value={threshold}
          onChange={setThreshold}
          disabled={!canEdit}
          label={`${ruleKey} threshold`}
          placeholder={r.specTarget ? "spec target" : ""}
        />
      </td>
      <td className="num">
        <input
          type="text"
          inputMode="numeric"
          size={5}
          value={forSeconds}
          onChange={(e) => setFor(e.target.value)}
          disabled={!canEdit}
          aria-label={`${ruleKey} for seconds`}
        />
      </td>
      <td className="num">
        <input
          type="text"
          inputMode="numeric"
          size={5}
          value={clearFor}
          onChange={(e) => setClearFor(e.target.value)}
          disabled={!canEdit}
          aria-label={`${ruleKey} clear-for seconds`}
        />
      </td>
      <td className="num">{r.repeatSeconds}</td>
      <td>
        <input
          type="checkbox"
          checked={enabled}
          onChange={(e) => setEnabled(e.target.checked)}
          disabled={!canEdit}
          aria-label={`${ruleKey} enabled`}
        />
      </td>
      <td className="mono small">{formatRuleValue(r.kind, r.lastValue)}</td>
      <td>
        {canEdit ? (
          <button
            type="button"
            className="button button--small"
            disabled={save.isPending}
            onClick={() =>
              save.mutate({
                pipeline,
                kind: r.kind as never,
                ...(r.output === null ? {} : { output: r.output }),
                threshold: threshold.trim() === "" ? null : num(threshold),
                forSeconds: num(forSeconds),
                clearForSeconds: num(clearFor),
                enabled,
              })
            }
          >
            Save
          </button>
        ) : null}
        {save.error ? (
          <div className="form__error small" role="alert" data-testid={`rule-error-${ruleKey}`}>
            {save.error.message}
          </div>
        ) : null}
        {save.isSuccess ? <div className="small muted">saved</div> : null}
      </td>
    </tr>
  );
}
