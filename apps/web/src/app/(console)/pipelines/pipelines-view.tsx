"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { EmptyState } from "@/components/empty-state";
import { useTRPC } from "@/trpc/react";

const dateTime = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short" });

export function PipelinesView() {
  const trpc = useTRPC();
  const pipelines = useQuery(trpc.pipeline.list.queryOptions());
  const teams = useQuery(trpc.team.list.queryOptions());

  return (
    <div className="stack">
      <section className="panel">
        <h2 className="panel__title">Fleet</h2>
        {pipelines.isPending ? (
          <p className="muted">Loading pipelines…</p>
        ) : pipelines.isError ? (
          <p className="form__error" role="alert">
            Could not load pipelines: {pipelines.error.message}
          </p>
        ) : pipelines.data.length === 0 ? (
          <EmptyState
            title="No pipelines yet"
            next={
              <>
                Register one from a spec file with <code>npx sluice run &lt;spec.yaml&gt;</code>; the pipeline
                editor in this console comes later.
              </>
            }
          >
            A pipeline is a versioned spec: a Kafka source, a contract, expectations, windows and a sink. Once
            registered it appears here with its owner team and version.
          </EmptyState>
        ) : (
          <table className="table" data-testid="pipelines-table">
            <thead>
              <tr>
                <th>Pipeline</th>
                <th>Owner</th>
                <th className="num">Version</th>
                <th>Registered</th>
              </tr>
            </thead>
            <tbody>
              {pipelines.data.map((p) => (
                <tr key={p.id}>
                  <td>
                    <Link className="strong mono" href={`/pipelines/${encodeURIComponent(p.name)}`}>
                      {p.name}
                    </Link>
                    {p.description ? <div className="muted small">{p.description}</div> : null}
                  </td>
                  <td>{p.ownerTeam.name}</td>
                  <td className="num">{p.latestVersion === null ? "—" : `v${p.latestVersion}`}</td>
                  <td className="muted">{dateTime.format(p.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section className="panel">
        <h2 className="panel__title">Teams</h2>
        <p className="muted small">
          Teams own pipelines; a pipeline&apos;s alerts go to its owner team&apos;s on-call.
        </p>
        {teams.isPending ? (
          <p className="muted">Loading teams…</p>
        ) : teams.isError ? (
          <p className="form__error" role="alert">
            Could not load teams: {teams.error.message}
          </p>
        ) : teams.data.length === 0 ? (
          <p className="muted">
            No teams yet. Run the demo seed (<code>npx tsx scripts/seed.ts</code>) or add one.
          </p>
        ) : (
          <table className="table" data-testid="teams-table">
            <thead>
              <tr>
                <th>Team</th>
                <th>Slug</th>
                <th className="num">Members</th>
                <th className="num">Pipelines</th>
              </tr>
            </thead>
            <tbody>
              {teams.data.map((t) => (
                <tr key={t.id}>
                  <td className="strong">{t.name}</td>
                  <td className="mono muted">{t.slug}</td>
                  <td className="num">{t.memberCount}</td>
                  <td className="num">{t.pipelineCount}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
