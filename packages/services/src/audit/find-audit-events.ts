// Reading the audit log: the Audit page's filters (actor, action, target or pipeline, outcome, time
// range), newest first with a cursor, and the same selection as CSV for export. Filters are values
// (Prisma parameters), never SQL text.
import { z } from "zod";
import type { Prisma, PrismaClient } from "@sluice/db";
import { escapeLike } from "../sql/escape-like";

export const ZFindAuditEventsInput = z
  .object({
    /** Part of the actor (an email, "system:…"), case-insensitive. */
    actor: z.string().trim().max(320).optional(),
    /** An action ("pipeline.pause") or its area ("pipeline", "change"): exact, or everything under it. */
    action: z.string().trim().max(100).optional(),
    /** Part of the target's name (a pipeline, an email, a team), case-insensitive. */
    target: z.string().trim().max(500).optional(),
    /** Exactly this pipeline (its page's own history). */
    pipeline: z.string().trim().max(200).optional(),
    outcome: z.enum(["succeeded", "refused"]).optional(),
    from: z.coerce.date().optional(),
    to: z.coerce.date().optional(),
    /** Events older than this id (the previous page's last one). */
    before: z.coerce.bigint().optional(),
    limit: z.number().int().min(1).max(500).default(50),
  })
  .refine((f) => !f.from || !f.to || f.from <= f.to, {
    message: "the start of the time range must be before its end",
    path: ["from"],
  });
export type TFindAuditEventsInput = z.input<typeof ZFindAuditEventsInput>;

export interface TAuditEventView {
  id: string;
  occurredAt: Date;
  actor: string;
  action: string;
  outcome: string;
  targetType: string | null;
  targetId: string | null;
  targetLabel: string | null;
  reason: string;
  before: unknown;
  after: unknown;
  origin: string;
  ipAddress: string | null;
  userAgent: string | null;
}

export function auditEventsWhere(f: z.output<typeof ZFindAuditEventsInput>): Prisma.AuditEventWhereInput {
  const and: Prisma.AuditEventWhereInput[] = [];
  // Typed text matches literally: % and _ are not wildcards (escape-like.ts).
  if (f.actor) and.push({ actor: { contains: escapeLike(f.actor), mode: "insensitive" } });
  if (f.action)
    and.push({
      OR: [{ action: f.action }, { action: { startsWith: `${escapeLike(f.action.replace(/\.$/, ""))}.` } }],
    });
  if (f.target) and.push({ targetLabel: { contains: escapeLike(f.target), mode: "insensitive" } });
  if (f.pipeline) and.push({ targetType: "pipeline", targetLabel: f.pipeline });
  if (f.outcome) and.push({ outcome: f.outcome });
  if (f.from) and.push({ occurredAt: { gte: f.from } });
  if (f.to) and.push({ occurredAt: { lte: f.to } });
  if (f.before !== undefined) and.push({ id: { lt: f.before } });
  return { AND: and };
}

export async function findAuditEvents(
  db: PrismaClient,
  input: TFindAuditEventsInput,
): Promise<{ events: TAuditEventView[]; nextBefore: string | null }> {
  const f = ZFindAuditEventsInput.parse(input);
  const rows = await db.auditEvent.findMany({
    where: auditEventsWhere(f),
    orderBy: { id: "desc" },
    take: f.limit + 1,
  });
  const events = rows.slice(0, f.limit).map(view);
  return { events, nextBefore: rows.length > f.limit ? events.at(-1)!.id : null };
}

/** Every event matching the filters as CSV (RFC 4180), oldest first, at most `max` rows. */
export async function exportAuditEventsCsv(
  db: PrismaClient,
  input: TFindAuditEventsInput,
  max = 100_000,
): Promise<string> {
  const f = ZFindAuditEventsInput.parse({ ...input, limit: 1 });
  const rows = await db.auditEvent.findMany({
    where: auditEventsWhere(f),
    orderBy: { id: "asc" },
    take: max,
  });
  const header = [
    "id",
    "occurred_at",
    "actor",
    "action",
    "outcome",
    "target_type",
    "target_id",
    "target",
    "reason",
    "before",
    "after",
    "origin",
    "ip_address",
    "user_agent",
  ];
  const lines = rows
    .map(view)
    .map((e) =>
      [
        e.id,
        e.occurredAt.toISOString(),
        e.actor,
        e.action,
        e.outcome,
        e.targetType,
        e.targetId,
        e.targetLabel,
        e.reason,
        json(e.before),
        json(e.after),
        e.origin,
        e.ipAddress,
        e.userAgent,
      ]
        .map(csvField)
        .join(","),
    );
  return [header.join(","), ...lines].join("\r\n") + "\r\n";
}

function view(r: Prisma.AuditEventGetPayload<object>): TAuditEventView {
  return {
    id: String(r.id),
    occurredAt: r.occurredAt,
    actor: r.actor,
    action: r.action,
    outcome: r.outcome,
    targetType: r.targetType,
    targetId: r.targetId,
    targetLabel: r.targetLabel,
    reason: r.reason,
    before: r.before,
    after: r.after,
    origin: r.origin,
    ipAddress: r.ipAddress,
    userAgent: r.userAgent,
  };
}

const json = (v: unknown) => (v === null || v === undefined ? "" : JSON.stringify(v));

/**
 * One CSV field: quoted when it holds a comma, quote or line break (quotes doubled). A field that a
 * spreadsheet would run as a formula (=, +, -, @, tab, CR at the start) is prefixed with ' — audit
 * rows carry user-typed reasons, and an export must not execute them (OWASP "CSV injection").
 */
export function csvField(value: string | null | undefined): string {
  if (value === null || value === undefined) return "";
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
