// The audit log: one append-only table (audit_events; a trigger refuses UPDATE, DELETE and TRUNCATE)
// for everything a person or the system changes — sign-ins and their failures, sign-outs, users,
// teams, the SSO mapping, and (as later work records them) pipeline actions, approvals and replays.
// Every writer goes through this function so the columns mean the same thing everywhere.
import { z } from "zod";
import type { Prisma, PrismaClient } from "@sluice/db";

/** Where a request came from; "web" carries the browser's address and user agent. */
export const ZAuditOrigin = z.object({
  origin: z.enum(["web", "cli", "sso", "system"]),
  ipAddress: z.string().max(200).nullish(),
  userAgent: z.string().max(1000).nullish(),
});
export type TAuditOrigin = z.infer<typeof ZAuditOrigin>;

export const ZAuditEventInput = z.object({
  /** The acting user (null: the system, or a sign-in attempt nobody is known for). */
  actorUserId: z.string().nullish(),
  /** Readable on its own: an email, "system:<what>", the email a failed sign-in tried. */
  actor: z.string().min(1).max(320),
  /** Dotted: "<area>.<verb>", e.g. "auth.sign_in", "user.role_change", "pipeline.pause". */
  action: z
    .string()
    .regex(
      /^[a-z][a-zA-Z_]*(\.[a-z][a-zA-Z_]*)+$/,
      "an action is dotted lower-case words, e.g. user.role_change",
    ),
  outcome: z.enum(["succeeded", "refused"]).default("succeeded"),
  target: z
    .object({
      type: z.string().min(1).max(100),
      id: z.string().max(200).nullish(),
      label: z.string().max(500).nullish(),
    })
    .nullish(),
  reason: z.string().max(2000).default(""),
  /** The target's state before and after the change (never secrets: callers pass redacted views). */
  before: z.unknown().optional(),
  after: z.unknown().optional(),
  from: ZAuditOrigin,
});
export type TAuditEventInput = z.input<typeof ZAuditEventInput>;

type TDb = PrismaClient | Prisma.TransactionClient;

/** Who did a change and from where, as services that audit their own changes receive it. */
export interface TAuditWho {
  actorUserId: string | null;
  /** Readable: an email, or "system:<what>". */
  actor: string;
  from: TAuditOrigin;
}

/** Append one event. Pass a transaction client to record it atomically with the change it describes. */
export async function recordAuditEvent(db: TDb, input: TAuditEventInput): Promise<void> {
  const e = ZAuditEventInput.parse(input);
  await db.auditEvent.create({
    data: {
      actorUserId: e.actorUserId ?? null,
      actor: e.actor,
      action: e.action,
      outcome: e.outcome,
      targetType: e.target?.type ?? null,
      targetId: e.target?.id ?? null,
      targetLabel: e.target?.label ?? null,
      reason: e.reason,
      before: json(e.before),
      after: json(e.after),
      origin: e.from.origin,
      ipAddress: e.from.ipAddress ?? null,
      userAgent: e.from.userAgent ?? null,
    },
  });
}

function json(value: unknown): Prisma.InputJsonValue | undefined {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as Prisma.InputJsonValue);
}
