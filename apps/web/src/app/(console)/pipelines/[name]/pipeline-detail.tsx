"use client";
// One pipeline version — the one `?v=N` names, else the serving one: its run state (pipeline.get),
// the engine's progress records (pipeline.batches) and dead letters (pipeline.deadLetters), each
// refreshed on its own. Every action on the page (lifecycle, checkpoint reset) acts on that version.
import { useQuery } from "@tanstack/react-query";
import type { TPipelineDetail, TPipelineRunSummary } from "@sluice/services";
import Link from "next/link";
import { EmptyState } from "@/components/empty-state";
import { isAuthError, useTRPC } from "@/trpc/react";
import { AuditLog } from "../../audit/audit-log";
import { FiringAlerts, LifecycleActions } from "../fleet-slots";
import { BatchHistory } from "./batch-history";
import { CheckpointReset } from "./checkpoint-reset";
import { Dashboards, VersionSelect } from "./dashboards";
import { DeadLettersPanel } from "./dead-letter-browser";
import { LatestBatch } from "./latest-batch";
import { PipelineAlerts } from "./pipeline-alerts";
import { RolloutBanner } from "./rollout/rollout-banner";
import { Time } from "@/components/time";
import { VersionHistory } from "./version-history";
import { useDashboardRange } from "./use-dashboard-range";

const REFRESH_MS = 5_000;
const DEAD_LETTERS_REFRESH_MS = 10_000;

const isNotFound = (error: unknown) =>
  (error as { data?: { code?: string } } | null)?.data?.code === "NOT_FOUND";
/** A missing pipeline stays missing: no retries, no polling (until the page is reloaded). */
const queryBehaviour = (everyMs: number) => ({
  retry: (failures: number, error: unknown) => !isNotFound(error) && !isAuthError(error) && failures < 2,
  refetchInterval: (query: { state: { error: unknown } }) =>
    isNotFound(query.state.error) ? false : everyMs,
});

export function PipelineDetail({
  name,
  canRespond = false,
  canEditRules = false,
}: {
  name: string;
  canRespond?: boolean;
  canEditRules?: boolean;
}) {
  const trpc = useTRPC();
  const input = { pipeline: name };
  const { range, version, setRange, setVersion } = useDashboardRange();
  const detail = useQuery({
    ...trpc.pipeline.get.queryOptions({ ...input, version }),
    ...queryBehaviour(REFRESH_MS),
  });
  const versions = useQuery({ ...trpc.signals.versions.queryOptions(input), ...queryBehaviour(REFRESH_MS) });
  const batches = useQuery({
    ...trpc.pipeline.batches.queryOptions({ ...input, version }),
    ...queryBehaviour(REFRESH_MS),
  });
  const deadLetters = useQuery({
    ...trpc.pipeline.deadLetters.queryOptions(input),
    ...queryBehaviour(DEAD_LETTERS_REFRESH_MS),
  });

  if (detail.isPending) return <p className="muted">Loading the pipeline…</p>;
  if (detail.isError) {
    if (isNotFound(detail.error)) {
      return (
        <EmptyState
          title="Pipeline not found"
          next={
            <>
              Pick one on the <Link href="/pipelines">Pipelines</Link> page, or register this one from its
              spec with <code>npx sluice start &lt;spec.yaml&gt;</code>.
            </>
          }
        >
          <p>
            No pipeline named <strong className="mono">{name}</strong> is registered.
          </p>
        </EmptyState>
      );
    }
    return (
      <p className="form__error" role="alert">
        Could not load the pipeline: {detail.error.message}
      </p>
    );
  }

  const p = detail.data;
  if (p.servingVersion === null) {
    return (
      <div className="stack">
        <Summary detail={p} />
        <EmptyState
          title="No version registered"
          next={
            <>
              Register and start it from its spec:{" "}
              <code>npx sluice start &lt;spec.yaml&gt; &quot;first deploy&quot;</code>.
            </>
          }
        >
          <p>The pipeline exists but has no spec version, so there is nothing for the engine to run.</p>
        </EmptyState>
      </div>
    );
  }

  // ?v=N for a version that does not exist: say so, never quietly show another version.
  if (!p.version || (version !== undefined && p.version.version !== version))
    return (
      <EmptyState
        title={`Version ${version} does not exist`}
        next={
          <>
            <Link href={`/pipelines/${encodeURIComponent(p.name)}`}>Show the serving version</Link> ({p.name}{" "}
            has {(versions.data ?? []).map((v) => `v${v.version}`).join(", ") || "no versions"}).
          </>
        }
      >
        The address asks for version {version} of {p.name}, which was never registered.
      </EmptyState>
    );

  const noBatches = batches.data && !batches.data.latest;
  const notRunning = noBatches
    ? p.run
      ? `No committed batch yet; the pipeline is ${p.run.phase}.`
      : `Not started: npx sluice start ${p.name} "first deploy"`
    : null;
  return (
    <div className="stack">
      <div className="header-slots" data-testid="pipeline-header-slots">
        <VersionSelect versions={versions.data ?? []} version={version} onChange={setVersion} />
        <FiringAlerts pipeline={p.name} placement="pipeline-header" />
        <LifecycleActions pipeline={p.name} version={p.version.version} placement="pipeline-header" />
      </div>
      <PipelineAlerts
        pipeline={p.name}
        canRespond={canRespond}
        canEditRules={canEditRules}
        shownVersion={p.version.version}
        servingVersion={p.servingVersion}
      />
      <RolloutBanner pipeline={p.name} />
      <Summary detail={p} />
      <Dashboards
        pipeline={p.name}
        version={version}
        versions={versions.data ?? []}
        range={range}
        setRange={setRange}
        notRunning={notRunning}
      />
      {batches.isPending ? (
        <p className="muted">Loading batches…</p>
      ) : batches.isError ? (
        <p className="form__error" role="alert">
          Could not load the batches: {batches.error.message}
        </p>
      ) : batches.data.latest ? (
        <>
          <LatestBatch latest={batches.data.latest} eventTime={p.version.eventTime} />
          <BatchHistory batches={batches.data.batches} pipeline={p.name} version={version ?? null} />
        </>
      ) : (
        <NoBatchesYet name={cliTarget(p)} version={p.version.version} run={p.run} topic={p.version.topic} />
      )}
      {deadLetters.isPending ? (
        <p className="muted">Loading dead letters…</p>
      ) : deadLetters.isError ? (
        <p className="form__error" role="alert">
          Could not load the dead letters: {deadLetters.error.message}
        </p>
      ) : (
        <DeadLettersPanel pipeline={p.name} summary={deadLetters.data} />
      )}
      <CheckpointReset pipeline={p.name} version={p.version.version} serving={p.version.serving} />
      <VersionHistory name={p.name} />
      <section className="panel" data-testid="pipeline-audit">
        <h2 className="panel__title">History</h2>
        <p className="muted small">
          Everything people did to this pipeline, newest first (the <Link href={`/audit`}>Audit</Link> page
          has every event, filters and CSV export).
        </p>
        <AuditLog pipeline={p.name} limit={15} />
      </section>
    </div>
  );
}

/** How the CLI names the version shown: `name` for the serving one, `name@N` for another. */
function cliTarget(p: TPipelineDetail): string {
  return p.version && !p.version.serving ? `${p.name}@${p.version.version}` : p.name;
}

function Summary({ detail: p }: { detail: TPipelineDetail }) {
  const v = p.version;
  return (
    <section className="panel" data-testid="pipeline-summary">
      <h2 className="panel__title">
        {v
          ? v.serving
            ? `Version ${v.version} (serving)`
            : `Version ${v.version} (not serving)`
          : "Version"}
      </h2>
      {v && !v.serving ? (
        <p className="notice small" data-testid="not-serving-notice">
          This page shows version {v.version}; the serving version is v{p.servingVersion}
          {v.supersededBy !== null
            ? ` — version ${v.supersededBy} took this one's place, so it can never run again`
            : " — this one runs on its own checkpoint and table"}
          . Every action here acts on version {v.version} only.
        </p>
      ) : null}
      {p.description ? <p className="small">{p.description}</p> : null}
      <dl className="facts">
        <div>
          <dt>Owner</dt>
          <dd>{p.ownerTeam.name}</dd>
        </div>
        <div>
          <dt>Version</dt>
          <dd data-testid="latest-version">
            {v ? (
              <>
                v{v.version}{" "}
                <span className="muted">
                  of {p.versionCount}, registered <Time value={v.createdAt} />
                </span>
              </>
            ) : (
              "—"
            )}
          </dd>
        </div>
        <div>
          <dt>Source topic</dt>
          <dd className="mono">{v?.topic ?? "—"}</dd>
          {v && v.partitionGroups > 1 ? (
            <dd data-testid="partition-groups">
              read in {v.partitionGroups} partition groups (partition p by group p mod {v.partitionGroups})
            </dd>
          ) : null}
        </div>
        <div>
          <dt>Event time</dt>
          <dd>
            {v?.eventTime ? (
              <>
                <span className="mono">{v.eventTime.column}</span>, watermark delay{" "}
                {v.eventTime.watermarkDelay ?? "—"}, a partition is idle after {v.eventTime.idleTimeout}{" "}
                without data
              </>
            ) : (
              <span className="muted">none (no watermark)</span>
            )}
          </dd>
        </div>
        <div>
          <dt>Run</dt>
          <dd>{p.run ? <RunPhase run={p.run} /> : <span className="badge">not started</span>}</dd>
        </div>
      </dl>
      {v && p.run ? <RunState name={cliTarget(p)} run={p.run} /> : null}
      {v && !p.run ? (
        <EmptyState
          title="Not started on the workers"
          next={
            <>
              Start it: <code>npx sluice start {cliTarget(p)} &quot;first deploy&quot;</code>. The workers
              then run it batch by batch
              {v.partitionGroups > 1 ? `, its ${v.partitionGroups} partition groups at once` : ""}, and its
              progress appears here. To try one batch in the foreground instead:{" "}
              <code>npx sluice run &lt;spec.yaml&gt; --once</code>.
            </>
          }
        >
          <p>
            Version {v.version} has no run state yet (table <code>pipeline_runs</code>): nobody has started
            it.
          </p>
        </EmptyState>
      ) : null}
    </section>
  );
}

const PHASE_CLASS: Record<TPipelineRunSummary["phase"], string> = {
  running: "badge badge--ok",
  pausing: "badge badge--warn",
  stopping: "badge badge--warn",
  paused: "badge badge--warn",
  stopped: "badge",
  failed: "badge badge--bad",
};

function RunPhase({ run }: { run: TPipelineRunSummary }) {
  return (
    <span className={PHASE_CLASS[run.phase]} data-testid="run-phase">
      {run.phase}
    </span>
  );
}

function RunState({ name, run }: { name: string; run: TPipelineRunSummary }) {
  const hint =
    run.phase === "failed" ? (
      <>
        Fix the data or the spec, then <code>npx sluice start &lt;fixed spec&gt;</code> or{" "}
        <code>npx sluice restart {name} &quot;why&quot;</code> (the failed batch re-runs over the same
        offsets). <code>npx sluice status {name}</code> shows the failed rule&apos;s sample rows.
      </>
    ) : run.phase === "paused" || run.phase === "pausing" ? (
      <>
        Resume it with <code>npx sluice resume {name}</code>.
      </>
    ) : run.phase === "stopped" || run.phase === "stopping" ? (
      <>
        Start it again with <code>npx sluice start {name} &quot;why&quot;</code>; it continues from its
        checkpoint.
      </>
    ) : null;
  return (
    <div className="run">
      <p className="small">
        {run.batchInFlight ? (
          <>
            Batch in flight since <Time value={run.batchInFlight.startedAt} /> on{" "}
            <span className="mono">{run.batchInFlight.workerId ?? "?"}</span>
            {run.batchInFlight.workerAlive ? "" : " (worker not heard from: its batch will be taken over)"}
            .{" "}
          </>
        ) : null}
        Last batch turn <Time value={run.lastBatchAt} />
        {run.nextBatchAt && run.phase === "running" ? (
          <>
            , next <Time value={run.nextBatchAt} />
          </>
        ) : null}
        .
      </p>
      {run.phase === "failed" || run.consecutiveFailures > 0 ? (
        <p className="form__error" role="alert">
          {run.phase === "failed"
            ? `Failed${run.failedBatchId !== null ? ` at batch ${run.failedBatchId}` : ""}`
            : `${run.consecutiveFailures} failed attempt(s), retrying`}
          {run.lastError ? `: ${run.lastError}` : ""}
        </p>
      ) : null}
      {hint ? <p className="small">{hint}</p> : null}
      {run.groups.length > 0 ? <GroupTurns run={run} /> : null}
      {run.transitions.length > 0 ? (
        <details className="small">
          <summary>Recent run changes</summary>
          <ul className="plain">
            {run.transitions.map((t, i) => (
              <li key={i}>
                <Time value={t.at} /> — {t.action}: {t.from ?? "—"} → {t.to} by{" "}
                <span className="mono">{t.actor}</span>
                {t.reason ? <> (&ldquo;{t.reason}&rdquo;)</> : null}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </div>
  );
}

/** A version read in partition groups: each group's chain of batches on the workers. */
function GroupTurns({ run }: { run: TPipelineRunSummary }) {
  return (
    <table className="table table--compact small" data-testid="group-turns">
      <caption className="muted">
        Partition groups — each runs its own batches, on whichever worker takes them
      </caption>
      <thead>
        <tr>
          <th scope="col">Group</th>
          <th scope="col">Now</th>
          <th scope="col">Last batch turn</th>
          <th scope="col">Failed attempts</th>
        </tr>
      </thead>
      <tbody>
        {run.groups.map((g) => (
          <tr key={g.no} data-testid={`group-turn-${g.no}`}>
            <td>
              {g.no} of {run.groups.length}
            </td>
            <td>
              {g.inFlight ? (
                <>
                  batch in flight since <Time value={g.inFlight.startedAt} /> on{" "}
                  <span className="mono">{g.inFlight.workerId ?? "?"}</span>
                  {g.inFlight.workerAlive ? "" : " (worker not heard from: it will be taken over)"}
                </>
              ) : g.drained ? (
                "drained (availableNow)"
              ) : g.nextBatchAt && run.phase === "running" ? (
                <>
                  next batch <Time value={g.nextBatchAt} />
                </>
              ) : (
                <span className="muted">
                  {run.phase === "running" ? "waiting for its next turn" : run.phase}
                </span>
              )}
            </td>
            <td>
              <Time value={g.lastBatchAt} />
            </td>
            <td className={g.consecutiveFailures > 0 ? "form__error" : undefined}>{g.consecutiveFailures}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function NoBatchesYet({
  name,
  version,
  run,
  topic,
}: {
  name: string;
  version: number;
  run: TPipelineRunSummary | null;
  topic: string | null;
}) {
  const running = run?.phase === "running";
  return (
    <EmptyState
      title="No committed batches yet"
      next={
        running ? (
          <>
            It is running on the workers: the first batch appears here once it commits
            {topic ? (
              <>
                {" "}
                (input from topic <span className="mono">{topic}</span>)
              </>
            ) : null}
            .
          </>
        ) : run ? (
          <>
            It is {run.phase}.{" "}
            {run.phase === "failed" ? (
              <>
                See the error above, then <code>npx sluice restart {name} &quot;why&quot;</code>.
              </>
            ) : (
              <>
                Start it: <code>npx sluice start {name}</code>.
              </>
            )}
          </>
        ) : (
          <>
            Start it on the workers: <code>npx sluice start {name} &quot;first deploy&quot;</code>.
          </>
        )
      }
    >
      <p>
        Version {version} has not committed a batch (table <code>batch_log</code>). Each committed batch
        leaves a progress record: rows in and out, backlog, watermark, state and each partition&apos;s event
        time.
      </p>
    </EmptyState>
  );
}
