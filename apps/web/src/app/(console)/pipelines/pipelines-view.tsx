"use client";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import { FleetTable } from "./fleet-table";

export function PipelinesView() {
  const trpc = useTRPC();
  const teams = useQuery(trpc.team.list.queryOptions());

  return (
    <div className="stack">
      <FleetTable />

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
