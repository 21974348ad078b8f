// Reads for the console and the CLI: alerts across the fleet (problems first), one pipeline's rules,
// alerts and silences, firing counts per pipeline for the fleet view, and the notification outbox.
import type { PrismaClient } from "@sluice/db";
import { z } from "zod";
import { declaredOutputs } from "../pipelines/declared-outputs";
import {
  RULE_KIND_INFO,
  ruleTitle,
  SEVERITIES,
  SEVERITY_ORDER,
  type TRuleKind,
  type TSeverity,
} from "./rule-kinds";

export const ZFindAlertsInput = z.object({
  team: z.string().max(100).optional(),
  severity: z.enum(SEVERITIES).optional(),
  pipeline: z.string().max(200).optional(),
  /** Resolved alerts of the last this many hours are listed too. */
  resolvedWithinHours: z
    .number()
    .int()
    .min(0)
    .max(24 * 30)
    .default(24),
});
export type TFindAlertsInput = z.input<typeof ZFindAlertsInput>;

export type TAlertState = "firing" | "acknowledged" | "resolved";
const STATE_ORDER: Record<TAlertState, number> = { firing: 0, acknowledged: 1, resolved: 2 };

export interface TAlertView {
  id: string;
  state: TAlertState;
  kind: TRuleKind;
  title: string;
  severity: TSeverity;
  pipeline: string | null;
  /** The output of the pipeline its rule watches; null: the pipeline as a whole. */
  output: string | null;
  version: number | null;
  /** The owner team, with its on-call email (shown; the webhook never is). */
  team: { slug: string; name: string; onCallEmail: string | null } | null;
  startedAt: Date;
  firedAt: Date;
  value: number | null;
  threshold: number | null;
  unit: string;
  summary: string;
  runbook: string;
  acknowledgedBy: string | null;
  acknowledgedAt: Date | null;
  ackNote: string | null;
  resolvedAt: Date | null;
  resolvedBy: string | null;
  silenced: boolean;
  /**
   * Per contact point, its latest notification of this alert: delivered, pending (with the last error
   * while retrying) or failed; `to` null when nobody could be paged (the team has no contact point).
   */
  deliveries: TAlertDelivery[];
}

export interface TAlertDelivery {
  kind: string;
  status: string;
  attempts: number;
  /** What went wrong, the receiver's status only. */
  lastError: string | null;
  /** The start of the receiver's answer: for the pipeline's owners and operators (receivers/). */
  lastResponse: string | null;
  to: string | null;
}

const EPISODE_INCLUDE = {
  rule: {
    select: {
      id: true,
      kind: true,
      output: true,
      pipelineId: true,
      pipeline: {
        select: { name: true, ownerTeam: { select: { slug: true, name: true, onCallEmail: true } } },
      },
    },
  },
  notifications: {
    orderBy: { id: "desc" as const },
    take: 30,
    select: {
      kind: true,
      status: true,
      attempts: true,
      lastError: true,
      lastResponse: true,
      contactPointId: true,
      teamId: true,
      contactPoint: { select: { name: true, kind: true } },
    },
  },
} as const;

type TEpisodeRow = Awaited<ReturnType<typeof episodesWhere>>[number];
function episodesWhere(
  db: PrismaClient,
  where: NonNullable<Parameters<PrismaClient["alertEpisode"]["findMany"]>[0]>["where"],
  take = 500,
) {
  return db.alertEpisode.findMany({ where, include: EPISODE_INCLUDE, orderBy: { firedAt: "desc" }, take });
}

async function activeSilences(db: PrismaClient, now: Date) {
  return db.alertSilence.findMany({
    where: { endedAt: null, expiresAt: { gt: now } },
    select: { id: true, pipelineId: true, ruleId: true },
  });
}

function view(e: TEpisodeRow, silences: { pipelineId: string | null; ruleId: string | null }[]): TAlertView {
  const kind = e.rule.kind as TRuleKind;
  const info = RULE_KIND_INFO[kind];
  // Newest first: keep each contact point's (or each unpaged team's) latest.
  const seen = new Set<string>();
  const deliveries: TAlertDelivery[] = [];
  for (const n of e.notifications) {
    const target = n.contactPointId ?? `team:${n.teamId}`;
    if (seen.has(target)) continue;
    seen.add(target);
    deliveries.push({
      kind: n.kind,
      status: n.status,
      attempts: n.attempts,
      lastError: n.lastError,
      lastResponse: n.lastResponse,
      to: n.contactPoint ? `${n.contactPoint.name} (${n.contactPoint.kind})` : null,
    });
  }
  return {
    id: String(e.id),
    state: e.state as TAlertState,
    kind,
    title: ruleTitle(kind, e.rule.output),
    severity: e.severity as TSeverity,
    pipeline: e.rule.pipeline?.name ?? null,
    output: e.rule.output,
    version: e.pipelineVersion,
    team: e.rule.pipeline?.ownerTeam ?? null,
    startedAt: e.startedAt,
    firedAt: e.firedAt,
    value: e.value,
    threshold: e.threshold,
    unit: info.unit,
    summary: e.summary,
    runbook: info.runbook,
    acknowledgedBy: e.acknowledgedBy,
    acknowledgedAt: e.acknowledgedAt,
    ackNote: e.ackNote,
    resolvedAt: e.resolvedAt,
    resolvedBy: e.resolvedBy,
    silenced:
      e.state !== "resolved" &&
      silences.some(
        (s) => s.ruleId === e.rule.id || (s.pipelineId !== null && s.pipelineId === e.rule.pipelineId),
      ),
    deliveries: deliveries.reverse(),
  };
}

const problemsFirst = (a: TAlertView, b: TAlertView) =>
  STATE_ORDER[a.state] - STATE_ORDER[b.state] ||
  SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] ||
  b.firedAt.getTime() - a.firedAt.getTime();

export async function findAlerts(
  db: PrismaClient,
  input: TFindAlertsInput = {},
  now = new Date(),
): Promise<TAlertView[]> {
  const f = ZFindAlertsInput.parse(input);
  const since = new Date(now.getTime() - f.resolvedWithinHours * 3600_000);
  const [rows, silences] = await Promise.all([
    episodesWhere(db, {
      OR: [{ resolvedAt: null }, { resolvedAt: { gte: since } }],
      ...(f.severity ? { severity: f.severity } : {}),
      ...(f.pipeline ? { rule: { pipeline: { name: f.pipeline } } } : {}),
      ...(f.team
        ? { rule: { pipeline: { ownerTeam: { slug: f.team }, ...(f.pipeline ? { name: f.pipeline } : {}) } } }
        : {}),
    }),
    activeSilences(db, now),
  ]);
  return rows.map((r) => view(r, silences)).sort(problemsFirst);
}

export interface TAlertRuleView {
  id: string;
  kind: TRuleKind;
  /** The output it watches; null: the pipeline as a whole. */
  output: string | null;
  title: string;
  unit: string;
  specTarget: boolean;
  min: number;
  max: number;
  severity: TSeverity;
  threshold: number | null;
  forSeconds: number;
  clearForSeconds: number;
  repeatSeconds: number;
  enabled: boolean;
  pending: boolean;
  lastValue: number | null;
  lastEvaluatedAt: Date | null;
  updatedBy: string;
}

export interface TPipelineAlerts {
  pipeline: string;
  /** The outputs its serving version declares: what a rule for one output may watch (none: one sink). */
  outputs: string[];
  rules: TAlertRuleView[];
  open: TAlertView[];
  history: (TAlertView & { events: { at: Date; type: string; actor: string; note: string }[] })[];
  silences: { id: string; kind: TRuleKind | null; reason: string; createdBy: string; expiresAt: Date }[];
}

export async function getPipelineAlerts(
  db: PrismaClient,
  pipeline: string,
  now = new Date(),
): Promise<TPipelineAlerts | null> {
  const p = await db.pipeline.findUnique({
    where: { name: pipeline },
    select: { id: true, name: true, servingVersion: { select: { spec: true } } },
  });
  if (!p) return null;
  const [rules, episodes, silences, allSilences] = await Promise.all([
    db.alertRule.findMany({ where: { pipelineId: p.id } }),
    db.alertEpisode.findMany({
      where: { rule: { pipelineId: p.id } },
      include: {
        ...EPISODE_INCLUDE,
        events: { orderBy: { at: "asc" }, select: { at: true, type: true, actor: true, note: true } },
      },
      orderBy: { firedAt: "desc" },
      take: 50,
    }),
    db.alertSilence.findMany({
      where: {
        endedAt: null,
        expiresAt: { gt: now },
        OR: [{ pipelineId: p.id }, { rule: { pipelineId: p.id } }],
      },
      include: { rule: { select: { kind: true } } },
      orderBy: { expiresAt: "asc" },
    }),
    activeSilences(db, now),
  ]);
  const views = episodes.map((e) => ({ ...view(e, allSilences), events: e.events }));
  const order = Object.fromEntries(Object.keys(RULE_KIND_INFO).map((k, i) => [k, i]));
  return {
    pipeline: p.name,
    outputs: declaredOutputs(p.servingVersion?.spec),
    rules: rules
      .map((r): TAlertRuleView => {
        const info = RULE_KIND_INFO[r.kind as TRuleKind];
        return {
          id: r.id,
          kind: r.kind as TRuleKind,
          output: r.output,
          title: ruleTitle(r.kind as TRuleKind, r.output),
          unit: info.unit,
          specTarget: info.specTarget,
          min: info.min,
          max: info.max,
          severity: r.severity as TSeverity,
          threshold: r.threshold,
          forSeconds: r.forSeconds,
          clearForSeconds: r.clearForSeconds,
          repeatSeconds: r.repeatSeconds,
          enabled: r.enabled,
          pending: r.pendingSince !== null,
          lastValue: r.lastValue,
          lastEvaluatedAt: r.lastEvaluatedAt,
          updatedBy: r.updatedBy,
        };
      })
      // By kind, each kind's own rule before those of its outputs.
      .sort((a, b) => order[a.kind]! - order[b.kind]! || (a.output ?? "").localeCompare(b.output ?? "")),
    open: views.filter((v) => v.state !== "resolved").sort(problemsFirst),
    history: views,
    silences: silences.map((s) => ({
      id: s.id,
      kind: (s.rule?.kind as TRuleKind | undefined) ?? null,
      reason: s.reason,
      createdBy: s.createdBy,
      expiresAt: s.expiresAt,
    })),
  };
}

export interface TFiringSummary {
  /** null: the fleet's own rules (no worker alive, a worker's heartbeat missing). */
  pipeline: string | null;
  firing: number;
  acknowledged: number;
  worst: TSeverity;
}

/** Unresolved alerts per pipeline and the fleet's own, for the fleet view (one query). */
export async function findFiringAlertsByPipeline(db: PrismaClient): Promise<TFiringSummary[]> {
  const rows = await db.alertEpisode.findMany({
    where: { resolvedAt: null },
    select: { state: true, severity: true, rule: { select: { pipeline: { select: { name: true } } } } },
  });
  const by = new Map<string | null, TFiringSummary>();
  for (const r of rows) {
    const name = r.rule.pipeline?.name ?? null;
    const s = by.get(name) ?? { pipeline: name, firing: 0, acknowledged: 0, worst: "info" as TSeverity };
    if (r.state === "acknowledged") s.acknowledged++;
    else s.firing++;
    if (SEVERITY_ORDER[r.severity as TSeverity] < SEVERITY_ORDER[s.worst]) s.worst = r.severity as TSeverity;
    by.set(name, s);
  }
  return [...by.values()];
}

export interface TAlertNotificationView {
  id: string;
  /** null: a test notification. */
  alertId: string | null;
  /** The contact point, "name (kind)"; null: nobody could be paged, or it was removed since. */
  to: string | null;
  kind: string;
  team: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  /** The start of the receiver's answer: for operators and admins (receivers/). */
  lastResponse: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
  nextAttemptAt: Date;
}

export async function findAlertNotifications(
  db: PrismaClient,
  opts: { limit?: number } = {},
): Promise<TAlertNotificationView[]> {
  const rows = await db.alertNotification.findMany({
    orderBy: { id: "desc" },
    take: opts.limit ?? 50,
    include: { team: { select: { name: true } }, contactPoint: { select: { name: true, kind: true } } },
  });
  return rows.map((n) => ({
    id: String(n.id),
    alertId: n.episodeId === null ? null : String(n.episodeId),
    to: n.contactPoint ? `${n.contactPoint.name} (${n.contactPoint.kind})` : null,
    kind: n.kind,
    team: n.team.name,
    status: n.status,
    attempts: n.attempts,
    lastStatusCode: n.lastStatusCode,
    lastError: n.lastError,
    lastResponse: n.lastResponse,
    createdAt: n.createdAt,
    deliveredAt: n.deliveredAt,
    nextAttemptAt: n.nextAttemptAt,
  }));
}
