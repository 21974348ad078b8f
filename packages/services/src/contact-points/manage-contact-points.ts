// An admin adds, changes and removes a team's contact points (several per team: every enabled one is
// paged). Each change is one transaction with its audit event, which keeps what the console may show
// (the kind, the variable's name or the URL's host, the recipients), never a stored secret.
import { z } from "zod";
import type { Prisma, PrismaClient } from "@sluice/db";
import { AdminChangeError, auditAdminChange, type TAdminContext } from "../admin/admin-change";
import { describeSecret, ZContactPointFields } from "./contact-point-kinds";

const ZId = z.string().min(1, "Which contact point?").max(100);

export const ZCreateContactPointInput = z.object({
  teamId: z.string().min(1, "Which team?").max(100),
  contactPoint: ZContactPointFields,
});
export const ZUpdateContactPointInput = z.object({ id: ZId, contactPoint: ZContactPointFields });
export const ZRemoveContactPointInput = z.object({ id: ZId });

type TCreate = z.input<typeof ZCreateContactPointInput>;
type TUpdate = z.input<typeof ZUpdateContactPointInput>;

function columns(
  cp: z.output<typeof ZContactPointFields>,
  previous?: { secretEnv: string | null; secretValue: string | null },
) {
  const secret =
    cp.secret.from === "env"
      ? { secretEnv: cp.secret.name, secretValue: null }
      : cp.secret.from === "value"
        ? { secretEnv: null, secretValue: cp.secret.value }
        : { secretEnv: previous?.secretEnv ?? null, secretValue: previous?.secretValue ?? null };
  return {
    name: cp.name,
    kind: cp.kind,
    ...(cp.kind === "email" ? { secretEnv: null, secretValue: null } : secret),
    endpoint: cp.kind === "pagerduty" && cp.endpoint ? cp.endpoint : null,
    addresses: cp.kind === "email" ? cp.addresses : [],
    enabled: cp.enabled,
  };
}

/** What the audit log and the console may keep of a contact point. */
export function shownContactPoint(cp: {
  name: string;
  kind: string;
  secretEnv: string | null;
  secretValue: string | null;
  endpoint: string | null;
  addresses: string[];
  enabled: boolean;
}) {
  return {
    name: cp.name,
    kind: cp.kind,
    target: describeSecret(cp),
    endpoint: cp.endpoint,
    addresses: cp.addresses,
    enabled: cp.enabled,
  };
}

async function assertNameFree(tx: Prisma.TransactionClient, teamId: string, name: string, except?: string) {
  const clash = await tx.contactPoint.findFirst({
    where: { teamId, name, ...(except ? { id: { not: except } } : {}) },
  });
  if (clash) throw new AdminChangeError(`The team already has a contact point named "${name}".`, "conflict");
}

export async function createContactPoint(
  db: PrismaClient,
  ctx: TAdminContext,
  input: TCreate,
): Promise<{ id: string }> {
  const { teamId, contactPoint } = ZCreateContactPointInput.parse(input);
  if (contactPoint.kind !== "email" && contactPoint.secret.from === "keep")
    throw new AdminChangeError(
      `A new ${contactPoint.kind} contact point needs its secret: an environment variable's name or the value`,
      "invalid",
    );
  return db.$transaction(async (tx) => {
    const team = await tx.team.findUnique({ where: { id: teamId }, select: { slug: true } });
    if (!team) throw new AdminChangeError("No such team (deleted meanwhile?); reload the page.", "not_found");
    await assertNameFree(tx, teamId, contactPoint.name);
    const row = await tx.contactPoint.create({
      data: { teamId, createdBy: ctx.actor.email, ...columns(contactPoint) },
    });
    await auditAdminChange(tx, ctx, {
      action: "team.contact_point_add",
      target: { type: "team", id: teamId, label: team.slug },
      after: shownContactPoint(row),
    });
    return { id: row.id };
  });
}

export async function updateContactPoint(
  db: PrismaClient,
  ctx: TAdminContext,
  input: TUpdate,
): Promise<{ id: string }> {
  const { id, contactPoint } = ZUpdateContactPointInput.parse(input);
  return db.$transaction(async (tx) => {
    const before = await tx.contactPoint.findUnique({
      where: { id },
      include: { team: { select: { slug: true } } },
    });
    if (!before)
      throw new AdminChangeError("No such contact point (removed meanwhile?); reload the page.", "not_found");
    if (
      contactPoint.kind !== before.kind &&
      contactPoint.kind !== "email" &&
      contactPoint.secret.from === "keep"
    )
      throw new AdminChangeError(
        `Changing the kind to ${contactPoint.kind} needs its secret too (the old one was for ${before.kind})`,
        "invalid",
      );
    await assertNameFree(tx, before.teamId, contactPoint.name, id);
    const after = await tx.contactPoint.update({ where: { id }, data: columns(contactPoint, before) });
    await auditAdminChange(tx, ctx, {
      action: "team.contact_point_change",
      target: { type: "team", id: before.teamId, label: before.team.slug },
      before: shownContactPoint(before),
      after: shownContactPoint(after),
    });
    return { id };
  });
}

/** Its delivery history stays (without the contact point); what was still pending fails, saying why. */
export async function removeContactPoint(
  db: PrismaClient,
  ctx: TAdminContext,
  input: z.input<typeof ZRemoveContactPointInput>,
): Promise<{ removed: boolean }> {
  const { id } = ZRemoveContactPointInput.parse(input);
  return db.$transaction(async (tx) => {
    const before = await tx.contactPoint.findUnique({
      where: { id },
      include: { team: { select: { slug: true } } },
    });
    if (!before) return { removed: false };
    await tx.alertNotification.updateMany({
      where: { contactPointId: id, status: "pending" },
      data: {
        status: "failed",
        lastError: `not sent: ${ctx.actor.email} removed the contact point ${before.name}`,
      },
    });
    await tx.contactPoint.delete({ where: { id } });
    await auditAdminChange(tx, ctx, {
      action: "team.contact_point_remove",
      target: { type: "team", id: before.teamId, label: before.team.slug },
      before: shownContactPoint(before),
    });
    return { removed: true };
  });
}
