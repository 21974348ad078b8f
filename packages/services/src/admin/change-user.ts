// An admin changes a user: their role, whether they are disabled (which signs them out everywhere at
// once), or their password (a new one, or a generated one-time password; also signs them out).
import { hashPassword } from "../auth/hash-password";
import { z } from "zod";
import type { PrismaClient } from "@sluice/db";
import {
  AdminChangeError,
  assertAnotherAdmin,
  auditAdminChange,
  generatePassword,
  signOutEverywhere,
  type TAdminContext,
} from "./admin-change";
import { ZNewPassword, ZRole } from "./create-user";

const ZUserId = z.string().min(1, "Which user?").max(100);
export const ZSetUserRoleInput = z.object({ userId: ZUserId, role: ZRole });
export const ZSetUserDisabledInput = z.object({
  userId: ZUserId,
  disabled: z.boolean(),
  reason: z.string().max(2000).default(""),
});
export const ZResetUserPasswordInput = z.object({
  userId: ZUserId,
  password: z.union([ZNewPassword, z.literal("generate")]).default("generate"),
});

async function userOrThrow(tx: Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0], userId: string) {
  const user = await tx.user.findUnique({
    where: { id: userId },
    select: { id: true, email: true, role: true, disabledAt: true },
  });
  if (!user) throw new AdminChangeError("No such user (deleted meanwhile?); reload the page.", "not_found");
  return user;
}

export async function setUserRole(
  db: PrismaClient,
  ctx: TAdminContext,
  input: z.input<typeof ZSetUserRoleInput>,
): Promise<{ changed: boolean }> {
  const { userId, role } = ZSetUserRoleInput.parse(input);
  return db.$transaction(async (tx) => {
    const user = await userOrThrow(tx, userId);
    if (user.role === role) return { changed: false };
    if (user.role === "admin") await assertAnotherAdmin(tx, userId, `make ${user.email} a ${role}`);
    await tx.user.update({ where: { id: userId }, data: { role } });
    await auditAdminChange(tx, ctx, {
      action: "user.role_change",
      target: { type: "user", id: userId, label: user.email },
      before: { role: user.role },
      after: { role },
    });
    return { changed: true };
  });
}

export async function setUserDisabled(
  db: PrismaClient,
  ctx: TAdminContext,
  input: z.input<typeof ZSetUserDisabledInput>,
): Promise<{ changed: boolean; sessionsEnded: number }> {
  const { userId, disabled, reason } = ZSetUserDisabledInput.parse(input);
  return db.$transaction(async (tx) => {
    const user = await userOrThrow(tx, userId);
    if ((user.disabledAt !== null) === disabled) return { changed: false, sessionsEnded: 0 };
    if (disabled && userId === ctx.actor.id)
      throw new AdminChangeError("You cannot disable yourself; ask another admin.", "conflict");
    if (disabled && user.role === "admin") await assertAnotherAdmin(tx, userId, `disable ${user.email}`);
    await tx.user.update({ where: { id: userId }, data: { disabledAt: disabled ? new Date() : null } });
    const sessionsEnded = disabled ? await signOutEverywhere(tx, userId) : 0;
    await auditAdminChange(tx, ctx, {
      action: disabled ? "user.disable" : "user.enable",
      target: { type: "user", id: userId, label: user.email },
      reason: disabled ? `${reason}${reason ? "; " : ""}${sessionsEnded} session(s) ended` : reason,
      before: { disabled: !disabled },
      after: { disabled },
    });
    return { changed: true, sessionsEnded };
  });
}

export async function resetUserPassword(
  db: PrismaClient,
  ctx: TAdminContext,
  input: z.input<typeof ZResetUserPasswordInput>,
): Promise<{ oneTimePassword: string | null; sessionsEnded: number }> {
  const { userId, password } = ZResetUserPasswordInput.parse(input);
  const plain = password === "generate" ? generatePassword() : password;
  const hash = await hashPassword(plain);
  return db.$transaction(async (tx) => {
    const user = await userOrThrow(tx, userId);
    await tx.account.upsert({
      where: { providerId_accountId: { providerId: "credential", accountId: userId } },
      create: {
        id: `credential-${userId}`,
        userId,
        providerId: "credential",
        accountId: userId,
        password: hash,
      },
      update: { password: hash },
    });
    const sessionsEnded = await signOutEverywhere(tx, userId);
    await auditAdminChange(tx, ctx, {
      action: "user.password_reset",
      target: { type: "user", id: userId, label: user.email },
      reason: `${password === "generate" ? "one-time password generated" : "set by the admin"}; ${sessionsEnded} session(s) ended`,
    });
    return { oneTimePassword: password === "generate" ? plain : null, sessionsEnded };
  });
}
