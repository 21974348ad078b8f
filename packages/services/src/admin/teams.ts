// An admin's teams: members (owners are members whose role is owner — they change the team's
// pipelines), the on-call email shown in the console, the contact points alerts page
// (contact-points/, listed here with their delivery health) and creating a team.
import { z } from "zod";
import type { PrismaClient } from "@sluice/db";
import type { TRole } from "../auth/roles";
import { AdminChangeError, auditAdminChange, type TAdminContext } from "./admin-change";
import { findContactPoints, type TContactPointView } from "../contact-points/find-contact-points";

export interface TAdminTeam {
  id: string;
  slug: string;
  name: string;
  onCallEmail: string | null;
  contactPoints: TContactPointView[];
  pipelineCount: number;
  members: { userId: string; email: string; name: string; role: TRole; source: string; owner: boolean }[];
}

export async function findAdminTeams(db: PrismaClient): Promise<TAdminTeam[]> {
  const rows = await db.team.findMany({
    orderBy: { name: "asc" },
    select: {
      id: true,
      slug: true,
      name: true,
      onCallEmail: true,
      _count: { select: { pipelines: true } },
      members: {
        select: { source: true, user: { select: { id: true, email: true, name: true, role: true } } },
        orderBy: { user: { email: "asc" } },
      },
    },
  });
  const points = await findContactPoints(db);
  return rows.map((t) => ({
    id: t.id,
    slug: t.slug,
    name: t.name,
    onCallEmail: t.onCallEmail,
    contactPoints: points.filter((p) => p.teamId === t.id),
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

export const ZSetTeamOnCallInput = z.object({
  teamId: ZTeamId,
  onCallEmail: z.union([
    z.email("The on-call contact is an email address, e.g. payments-oncall@example.com").max(320),
    z.literal(""),
  ]),
});

/** The on-call email shown beside the team's alerts (paging itself goes to its contact points). */
export async function setTeamOnCall(
  db: PrismaClient,
  ctx: TAdminContext,
  input: z.input<typeof ZSetTeamOnCallInput>,
): Promise<{ onCallEmail: string | null }> {
  const { teamId, onCallEmail } = ZSetTeamOnCallInput.parse(input);
  return db.$transaction(async (tx) => {
    const team = await tx.team.findUnique({
      where: { id: teamId },
      select: { slug: true, onCallEmail: true },
    });
    if (!team) throw new AdminChangeError("No such team (deleted meanwhile?); reload the page.", "not_found");
    const data = { onCallEmail: onCallEmail || null };
    await tx.team.update({ where: { id: teamId }, data });
    await auditAdminChange(tx, ctx, {
      action: "team.on_call_change",
      target: { type: "team", id: teamId, label: team.slug },
      before: { onCallEmail: team.onCallEmail },
      after: data,
    });
    return data;
  });
}
