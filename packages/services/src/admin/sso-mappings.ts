// The single sign-on group mapping, edited by admins: identity-provider group → role (and optionally
// a team). Applied at each user's next single sign-on (sso/sso-grants.ts).
import { z } from "zod";
import type { PrismaClient } from "@sluice/db";
import type { TRole } from "../auth/roles";
import { AdminChangeError, auditAdminChange, type TAdminContext } from "./admin-change";
import { ZRole } from "./create-user";

export interface TSsoMappingView {
  id: string;
  group: string;
  role: TRole;
  team: { id: string; slug: string; name: string } | null;
  createdAt: Date;
}

export async function findSsoMappings(db: PrismaClient): Promise<TSsoMappingView[]> {
  return db.ssoGroupMapping.findMany({
    orderBy: [{ group: "asc" }, { createdAt: "asc" }],
    select: {
      id: true,
      group: true,
      role: true,
      createdAt: true,
      team: { select: { id: true, slug: true, name: true } },
    },
  });
}

export const ZCreateSsoMappingInput = z.object({
  group: z
    .string()
    .trim()
    .min(1, "Enter the identity provider's group name, exactly as its groups claim lists it")
    .max(256),
  role: ZRole,
  /** null: the group grants the role only, in no team. */
  teamId: z.string().min(1).max(100).nullable().default(null),
});

export async function createSsoMapping(
  db: PrismaClient,
  ctx: TAdminContext,
  input: z.input<typeof ZCreateSsoMappingInput>,
): Promise<{ id: string }> {
  const { group, role, teamId } = ZCreateSsoMappingInput.parse(input);
  return db.$transaction(async (tx) => {
    const team = teamId ? await tx.team.findUnique({ where: { id: teamId }, select: { slug: true } }) : null;
    if (teamId && !team)
      throw new AdminChangeError("That team does not exist (any more); reload the page.", "not_found");
    if (await tx.ssoGroupMapping.findFirst({ where: { group, teamId }, select: { id: true } })) {
      throw new AdminChangeError(
        `Group "${group}" is mapped${team ? ` for team ${team.slug}` : " without a team"} already; remove that row to change its role.`,
        "conflict",
      );
    }
    const row = await tx.ssoGroupMapping.create({ data: { group, role, teamId } });
    await auditAdminChange(tx, ctx, {
      action: "sso_mapping.create",
      target: { type: "sso_mapping", id: row.id, label: group },
      after: { group, role, team: team?.slug ?? null },
    });
    return { id: row.id };
  });
}

export const ZDeleteSsoMappingInput = z.object({ id: z.string().min(1, "Which mapping?").max(100) });

export async function deleteSsoMapping(
  db: PrismaClient,
  ctx: TAdminContext,
  input: z.input<typeof ZDeleteSsoMappingInput>,
): Promise<{ deleted: boolean }> {
  const { id } = ZDeleteSsoMappingInput.parse(input);
  return db.$transaction(async (tx) => {
    const row = await tx.ssoGroupMapping.findUnique({
      where: { id },
      select: { group: true, role: true, team: { select: { slug: true } } },
    });
    if (!row) throw new AdminChangeError("That mapping is gone already; reload the page.", "not_found");
    await tx.ssoGroupMapping.delete({ where: { id } });
    await auditAdminChange(tx, ctx, {
      action: "sso_mapping.delete",
      target: { type: "sso_mapping", id, label: row.group },
      before: { group: row.group, role: row.role, team: row.team?.slug ?? null },
    });
    return { deleted: true };
  });
}
