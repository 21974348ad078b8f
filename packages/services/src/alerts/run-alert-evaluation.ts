// One evaluation tick: take the lease, read the signals (outside the transaction: they are the
// dashboards' queries), then — in one transaction fenced on the lease epoch — step every enabled rule
// (step-rule.ts), open / update / resolve episodes with their history, and queue their notifications
// in the outbox (dedup keys make a re-run tick harmless). Delivery happens afterwards
// (deliver-alert-notifications.ts). Called by the workers' `alerts.evaluate` job and, for
// no_worker_alive only, by the console's watchdog.
import { countOf, rowsOf, sql, tables, type Prisma, type PrismaClient } from "@sluice/db";
import type { TFleetAlertSignals, TPipelineAlertSignals } from "./alert-signals";
import {
  AlertEvaluatorFencedError,
  assertAlertLease,
  takeAlertLease,
  type TEvaluatorId,
} from "./alert-lease";
import { ensureDefaultRules } from "./ensure-default-rules";
import { evaluateFleetCondition, evaluateRuleCondition, type TCondition } from "./evaluate-condition";
import { findFleetAlertSignals, findPipelineAlertSignals } from "./find-alert-signals";
import { RULE_KIND_INFO, type TRuleKind, type TSeverity } from "./rule-kinds";
import { queueNotifications } from "./queue-notifications";
import { isSilenced, stepRule, type TNotifyKind } from "./step-rule";

export interface TAlertEvaluationOptions {
  evaluator: TEvaluatorId;
  owner: string;
  leaseMs: number;
  /** The rules this evaluator decides. */
  kinds: readonly TRuleKind[];
  /** Take the lease even from a live holder (the workers: the job is the turn); see takeAlertLease. */
  takeover?: boolean;
  now?: Date;
}

export type TAlertEvaluationResult =
  | { evaluated: true; epoch: bigint; rules: number; opened: number; resolved: number; queued: number }
  | { evaluated: false; reason: "lease held by another evaluator" | "fenced: a newer tick took the lease" };

export async function runAlertEvaluation(
  db: PrismaClient,
  opts: TAlertEvaluationOptions,
): Promise<TAlertEvaluationResult> {
  const epoch = await takeAlertLease(db, opts.evaluator, opts.owner, opts.leaseMs, opts.takeover ?? false);
  if (epoch === null) return { evaluated: false, reason: "lease held by another evaluator" };
  const now = opts.now ?? new Date();
  await ensureDefaultRules(db);
  const needsPipelines = opts.kinds.some((k) => RULE_KIND_INFO[k].scope === "pipeline");
  const [pipelines, fleet] = await Promise.all([
    needsPipelines ? findPipelineAlertSignals(db, now) : Promise.resolve([]),
    findFleetAlertSignals(db, now),
  ]);
  const byPipeline = new Map(pipelines.map((p) => [p.pipelineId, p]));
  return evaluateFenced(db, opts, epoch, now, byPipeline, fleet).catch((err: unknown) => {
    // A newer tick (another worker's job) took the lease meanwhile: this one's decisions are discarded, by design.
    if (err instanceof AlertEvaluatorFencedError)
      return { evaluated: false as const, reason: "fenced: a newer tick took the lease" as const };
    throw err;
  });
}

function evaluateFenced(
  db: PrismaClient,
  opts: TAlertEvaluationOptions,
  epoch: bigint,
  now: Date,
  byPipeline: Map<string, TPipelineAlertSignals>,
  fleet: TFleetAlertSignals,
): Promise<TAlertEvaluationResult> {
  return db.$transaction(
    async (tx) => {
      await assertAlertLease(tx, opts.evaluator, opts.owner, epoch);
      const counts = { rules: 0, opened: 0, resolved: 0, queued: 0 };
      // Lock open episodes so a person acknowledging or resolving one waits for this tick (and vice versa).
      await rowsOf(
        tx,
        tables.selectFrom("alert_episodes").select("id").where("resolved_at", "is", null).forUpdate(),
      );
      const [rules, silences, fleetTeams] = await Promise.all([
        tx.alertRule.findMany({
          where: { kind: { in: [...opts.kinds] }, enabled: true },
          include: { episodes: { where: { resolvedAt: null } }, pipeline: { select: { name: true } } },
        }),
        tx.alertSilence.findMany({ where: { endedAt: null, expiresAt: { gt: now } } }),
        fleetRecipients(tx),
      ]);
      const ruleStates: { id: string; pendingSince: string | null; value: number | null }[] = [];
      for (const rule of rules) {
        const kind = rule.kind as TRuleKind;
        const signals = rule.pipelineId ? byPipeline.get(rule.pipelineId) : fleet;
        if (!signals) continue;
        const cond = conditionOf(kind, rule, signals, now);
        const open = rule.episodes[0] ?? null;
        const silenced = isSilenced(silences, rule, now);
        const step = stepRule(
          rule,
          open
            ? {
                state: open.state as "firing" | "acknowledged",
                clearSince: open.clearSince,
                notifiedAt: open.notifiedAt,
                lastNotifiedAt: open.lastNotifiedAt,
              }
            : null,
          cond,
          silenced,
          now,
        );
        counts.rules++;
        ruleStates.push({
          id: rule.id,
          pendingSince: step.pendingSince?.toISOString() ?? null,
          value: cond.value,
        });
        if (step.action === "idle") continue;
        const pipeline = rule.pipelineId ? (signals as TPipelineAlertSignals) : null;
        const recipients = pipeline ? [pipeline.ownerTeamId] : fleetTeams;
        let episode = open;
        if (step.action === "open") {
          episode = await tx.alertEpisode.create({
            data: {
              ruleId: rule.id,
              pipelineId: rule.pipelineId,
              pipelineVersion: pipeline?.version ?? null,
              state: "firing",
              severity: rule.severity,
              startedAt: step.startedAt,
              firedAt: now,
              value: cond.value,
              threshold: cond.threshold,
              summary: cond.summary,
            },
          });
          await tx.alertEpisodeEvent.create({
            data: {
              episodeId: episode.id,
              at: now,
              type: "fired",
              actor: "system",
              note: cond.summary,
              value: cond.value,
            },
          });
          if (!step.notify)
            await tx.alertEpisodeEvent.create({
              data: {
                episodeId: episode.id,
                at: now,
                type: "suppressed",
                actor: "system",
                note: "silenced: the firing notification waits for the silence to end",
              },
            });
          counts.opened++;
        } else if (step.action === "resolve") {
          await tx.alertEpisode.update({
            where: { id: open!.id },
            data: {
              state: "resolved",
              resolvedAt: now,
              resolvedBy: "auto",
              value: cond.value,
              summary: cond.summary,
            },
          });
          await tx.alertEpisodeEvent.create({
            data: {
              episodeId: open!.id,
              at: now,
              type: "resolved",
              actor: "system",
              note: `clear for ${rule.clearForSeconds} s: ${cond.summary}`,
              value: cond.value,
            },
          });
          counts.resolved++;
        } else {
          await tx.alertEpisode.update({
            where: { id: open!.id },
            data: {
              clearSince: step.clearSince,
              value: cond.value,
              threshold: cond.threshold,
              summary: cond.summary,
            },
          });
        }
        if (!step.notify || !episode) continue;
        const ep = episode;
        const n = step.notify === "reminder" ? ep.reminders + 1 : 0;
        const notify = step.notify;
        const queued = await queueNotifications(tx, {
          episodeId: ep.id,
          kind: notify,
          n,
          teamIds: recipients,
          now,
          facts: (team) => ({
            kind: notify,
            episodeId: String(ep.id),
            rule: kind,
            severity: rule.severity as TSeverity,
            pipeline: rule.pipeline?.name ?? null,
            version: ep.pipelineVersion,
            output: rule.output,
            team,
            startedAt: ep.startedAt.toISOString(),
            value: cond.value,
            threshold: cond.threshold,
            summary: cond.summary,
            ...(notify === "resolve" ? { actor: "auto", resolvedAt: now.toISOString() } : {}),
          }),
        });
        counts.queued += queued.queued;
        if (step.action !== "resolve") {
          await tx.alertEpisode.update({
            where: { id: ep.id },
            data: {
              lastNotifiedAt: now,
              ...(step.notify === "fire" ? { notifiedAt: now } : {}),
              ...(step.notify === "reminder" ? { reminders: n } : {}),
            },
          });
        }
        await tx.alertEpisodeEvent.create({
          data: {
            episodeId: ep.id,
            at: now,
            type: eventOf(step.notify),
            actor: "system",
            note: queued.note,
          },
        });
      }
      // Every rule's pending state and last value in one statement (a tick touches every rule).
      if (ruleStates.length > 0) {
        type TRuleState = { id: string; pendingSince: Date | null; value: number | null };
        const states = sql<TRuleState>`jsonb_to_recordset(${JSON.stringify(ruleStates)}::jsonb)`.as<"u">(
          sql`u(id text, "pendingSince" timestamptz, value float8)`,
        );
        await countOf(
          tx,
          tables
            .updateTable("alert_rules as r")
            .from(states)
            .set((eb) => ({
              pending_since: eb.ref("u.pendingSince"),
              last_value: eb.ref("u.value"),
              last_evaluated_at: now,
            }))
            .whereRef("r.id", "=", "u.id"),
        );
      }
      return { evaluated: true as const, epoch, ...counts };
    },
    { timeout: 30_000 },
  );
}

function conditionOf(
  kind: TRuleKind,
  rule: { threshold: number | null; output: string | null },
  signals: TPipelineAlertSignals | TFleetAlertSignals,
  now: Date,
): TCondition {
  return RULE_KIND_INFO[kind].scope === "fleet"
    ? evaluateFleetCondition(kind, rule.threshold, signals as TFleetAlertSignals, now)
    : evaluateRuleCondition(kind, rule.threshold, rule.output, signals as TPipelineAlertSignals, now);
}

const eventOf = (kind: TNotifyKind) =>
  kind === "fire" ? "notified" : kind === "reminder" ? "reminded" : "notified_resolved";

/** A fleet alert pages every team that owns a pipeline that should be running (they are the ones affected). */
async function fleetRecipients(tx: Prisma.TransactionClient): Promise<string[]> {
  const rows = await tx.pipeline.findMany({
    where: { versions: { some: { run: { desiredState: "running" } } } },
    select: { ownerTeamId: true },
    distinct: ["ownerTeamId"],
  });
  return rows.map((r) => r.ownerTeamId);
}
