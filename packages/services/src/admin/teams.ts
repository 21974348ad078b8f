// An admin's teams: members (owners are members whose role is owner — they change the team's
// pipelines), the on-call contact (an email shown in the console, and a webhook for alerts), and
// creating a team. The on-call webhook is either the NAME of an environment variable holding the URL
// (the URL never enters the database) or a stored URL, treated as a secret: written here, never
// returned — views say only whether one is set and its host.
import { z } from "zod";
import type { PrismaClient } from "@sluice/db";
import type { TRole } from "../auth/roles";
import { AdminChangeError, auditAdminChange, type TAdminContext } from "./admin-change";

export type TOnCallWebhook = { kind: "env"; name: string } | { kind: "url"; host: string } | null;

export interface TAdminTeam {
  id: string;
  slug: string;
  name: string;
  onCallEmail: string | null;
  onCallWebhook: TOnCallWebhook;
  pipelineCount: number;
  members: { userId: string; email: string; name: string; role: TRole; source: string; owner: boolean }[];
}

/** What the console may show of a team's on-call webhook: never the stored URL itself. */
export function onCallWebhookView(team: {
  onCallWebhookEnv: string | null;
  onCallWebhookUrl: string | null;
}): TOnCallWebhook {
  if (team.onCallWebhookEnv) return { kind: "env", name: team.onCallWebhookEnv };
  if (!team.onCallWebhookUrl) return null;
  try {
    return { kind: "url", host: new URL(team.onCallWebhookUrl).host };
  } catch {
    return { kind: "url", host: "(unreadable URL)" };
  }
}

export async function findAdminTeams(db: PrismaClient): Promise<TAdminTeam[]> {
  const rows = await db.team.findMany({
    orderBy: { name: "asc" },
    select: {
      id: true,
      slug: true,
      name: true,
      onCallEmail: true,
      onCallWebhookEnv: true,
      onCallWebhookUrl: true,
      _count: { select: { pipelines: true } },
      members: {
        select: { source: true, user: { select: { id: true, email: true, name: true, role: true } } },
        orderBy: { user: { email: "asc" } },
      },
    },
  });
  return rows.map((t) => ({
    id: t.id,
    slug: t.slug,
    name: t.name,
    onCallEmail: t.onCallEmail,
    onCallWebhook: onCallWebhookView(t),
    pipelineCount: t._count.pipelines,
    members: t.members.map((m) => ({
      userId: m.user.id,
      email: m.user.email,
      name: m.user.name,
      role: m.user.role,
      source: m.source,
      owner: m.user.role === "owner" || m.user.role === "admin",
    })),
  }));
}

const ZTeamId = z.string().min(1, "Which team?").max(100);

export const ZCreateTeamInput = z.object({
  slug: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9-]{0,62}$/,
      "A team's id is lower-case letters, digits and dashes, e.g. payments-data (pipeline specs name it as owner)",
    ),
  name: z.string().trim().min(1, "Enter the team's name").max(200),
});

export async function createTeam(
  db: PrismaClient,
  ctx: TAdminContext,
  input: z.input<typeof ZCreateTeamInput>,
): Promise<{ id: string }> {
  const { slug, name } = ZCreateTeamInput.parse(input);
  return db.$transaction(async (tx) => {
    if (await tx.team.findUnique({ where: { slug }, select: { id: true } }))
      throw new AdminChangeError(`A team "${slug}" exists already.`, "conflict");
    const team = await tx.team.create({ data: { slug, name } });
    await auditAdminChange(tx, ctx, {
      action: "team.create",
      target: { type: "team", id: team.id, label: slug },
      after: { slug, name },
    });
    return { id: team.id };
  });
}

export const ZTeamMemberInput = z.object({
  teamId: ZTeamId,
  userId: z.string().min(1, "Which user?").max(100),
  member: z.boolean(),
});

export async function setTeamMember(
  db: PrismaClient,
  ctx: TAdminContext,
  input: z.input<typeof ZTeamMemberInput>,
): Promise<{ changed: boolean }> {
  const { teamId, userId, member } = ZTeamMemberInput.parse(input);
  return db.$transaction(async (tx) => {
    const team = await tx.team.findUnique({ where: { id: teamId }, select: { slug: true } });
    const user = await tx.user.findUnique({ where: { id: userId }, select: { email: true } });
    if (!team || !user)
      throw new AdminChangeError("No such team or user (deleted meanwhile?); reload the page.", "not_found");
    const existing = await tx.teamMember.findUnique({ where: { teamId_userId: { teamId, userId } } });
    if (Boolean(existing) === member) return { changed: false };
    if (member) await tx.teamMember.create({ data: { teamId, userId, source: "admin" } });
    else await tx.teamMember.delete({ where: { teamId_userId: { teamId, userId } } });
    await auditAdminChange(tx, ctx, {
      action: member ? "team.member_add" : "team.member_remove",
      target: { type: "team", id: teamId, label: team.slug },
      reason: user.email,
      before: { member: !member },
      after: { member },
    });
    return { changed: true };
  });
}

const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;

export const ZSetTeamOnCallInput = z.object({
  teamId: ZTeamId,
  onCallEmail: z.union([
    z.email("The on-call contact is an email address, e.g. payments-oncall@example.com").max(320),
    z.literal(""),
  ]),
  /** keep: leave the webhook as it is; clear; env: the name of a variable; url: a stored secret URL. */
  webhook: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("keep") }),
    z.object({ kind: z.literal("clear") }),
    z.object({
      kind: z.literal("env"),
      name: z.string().regex(ENV_NAME, "An environment variable's name, e.g. PAYMENTS_ONCALL_WEBHOOK_URL"),
    }),
    z.object({
      kind: z.literal("url"),
      url: z
        .url({
          protocol: /^https?$/,
          error: "A webhook URL starts with https:// (or http:// on a private network)",
        })
        .max(2000),
    }),
  ]),
});

export async function setTeamOnCall(
  db: PrismaClient,
  ctx: TAdminContext,
  input: z.input<typeof ZSetTeamOnCallInput>,
): Promise<{ onCallEmail: string | null; onCallWebhook: TOnCallWebhook }> {
  const { teamId, onCallEmail, webhook } = ZSetTeamOnCallInput.parse(input);
  return db.$transaction(async (tx) => {
    const team = await tx.team.findUnique({
      where: { id: teamId },
      select: { slug: true, onCallEmail: true, onCallWebhookEnv: true, onCallWebhookUrl: true },
    });
    if (!team) throw new AdminChangeError("No such team (deleted meanwhile?); reload the page.", "not_found");
    const hook =
      webhook.kind === "keep"
        ? { onCallWebhookEnv: team.onCallWebhookEnv, onCallWebhookUrl: team.onCallWebhookUrl }
        : webhook.kind === "clear"
          ? { onCallWebhookEnv: null, onCallWebhookUrl: null }
          : webhook.kind === "env"
            ? { onCallWebhookEnv: webhook.name, onCallWebhookUrl: null }
            : { onCallWebhookEnv: null, onCallWebhookUrl: webhook.url };
    const data = { onCallEmail: onCallEmail || null, ...hook };
    await tx.team.update({ where: { id: teamId }, data });
    // The audit keeps what the console may show: the variable's name or the URL's host, never the URL.
    await auditAdminChange(tx, ctx, {
      action: "team.on_call_change",
      target: { type: "team", id: teamId, label: team.slug },
      before: { onCallEmail: team.onCallEmail, onCallWebhook: onCallWebhookView(team) },
      after: { onCallEmail: data.onCallEmail, onCallWebhook: onCallWebhookView(data) },
    });
    return { onCallEmail: data.onCallEmail, onCallWebhook: onCallWebhookView(data) };
  });
}
