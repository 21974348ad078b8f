// An admin creates (invites) a user: email, name, role, teams, and a password — the admin's, or a
// generated one-time password returned once so the admin can hand it over (the user then changes it
// on the Account page). A user who will only use single sign-on may be created without a password.
// The first admin of an install without one (`sluice users create` with nobody to act as) is created
// only while there still is none, decided under a transaction-scoped advisory lock: two such
// creations at once are serialized, and the second sees the first's admin and is refused.
import { hashPassword } from "../auth/hash-password";
import { z } from "zod";
import { rowsOf, sql, tables, type PrismaClient } from "@sluice/db";
import { ROLES, type TRole } from "../auth/roles";
import { AdminChangeError, auditAdminChange, generatePassword, type TAdminContext } from "./admin-change";

export const ZEmail = z
  .email("Enter an email address, e.g. ada@example.com")
  .max(320)
  .transform((e) => e.trim().toLowerCase());
export const ZRole = z.enum(ROLES as unknown as [TRole, ...TRole[]], {
  error: `Choose a role: ${ROLES.join(", ")}`,
});
export const ZNewPassword = z.string().min(10, "A password has at least 10 characters").max(256);

export const ZCreateUserInput = z.object({
  email: ZEmail,
  name: z.string().trim().min(1, "Enter the person's name").max(200),
  role: ZRole,
  teamIds: z.array(z.string().min(1)).max(50).default([]),
  /** "generate": a one-time password is generated and returned; "none": single sign-on only. */
  password: z.union([ZNewPassword, z.literal("generate"), z.literal("none")]).default("generate"),
});
export type TCreateUserInput = z.input<typeof ZCreateUserInput>;

/** The first admin was not created: the install has an admin (created meanwhile). */
export class FirstAdminExistsError extends AdminChangeError {
  constructor(readonly admin: string) {
    super(
      `This install has an admin now (${admin}, created meanwhile): people are added by an admin.`,
      "conflict",
    );
    this.name = "FirstAdminExistsError";
  }
}

export async function createUser(
  db: PrismaClient,
  ctx: TAdminContext,
  input: TCreateUserInput,
  opts: {
    /** Bootstrap: create this admin only if the install has no enabled admin when it commits. */
    firstAdmin?: boolean;
  } = {},
): Promise<{ id: string; email: string; oneTimePassword: string | null }> {
  const { email, name, role, teamIds, password } = ZCreateUserInput.parse(input);
  if (opts.firstAdmin && role !== "admin")
    throw new AdminChangeError("The first user of an install is an admin.", "conflict");
  const plain = password === "generate" ? generatePassword() : password === "none" ? null : password;
  const hash = plain ? await hashPassword(plain) : null;
  return db.$transaction(async (tx) => {
    if (opts.firstAdmin) {
      // Held until this transaction ends; the count below runs after any earlier holder committed.
      // Wrapped in a sub-select: the lock function returns void, which is not a column Prisma can read.
      await rowsOf(
        tx,
        tables
          .selectFrom(
            tables
              .selectNoFrom(sql`pg_advisory_xact_lock(hashtext('sluice.first-admin'))`.as("locked"))
              .as("l"),
          )
          .select(sql<number>`1`.as("one")),
      );
      const admin = await tx.user.findFirst({
        where: { role: "admin", disabledAt: null },
        select: { email: true },
      });
      if (admin) throw new FirstAdminExistsError(admin.email);
    }
    if (await tx.user.findUnique({ where: { email }, select: { id: true } }))
      throw new AdminChangeError(`A user with email ${email} exists already.`, "conflict");
    const teams = await tx.team.findMany({
      where: { id: { in: teamIds } },
      select: { id: true, slug: true },
    });
    if (teams.length !== new Set(teamIds).size)
      throw new AdminChangeError(
        "One of the chosen teams does not exist (any more); reload the page.",
        "not_found",
      );
    const user = await tx.user.create({
      data: {
        email,
        name,
        role,
        memberships: { create: teams.map((t) => ({ teamId: t.id, source: "admin" })) },
      },
    });
    if (hash)
      await tx.account.create({
        data: {
          id: `credential-${user.id}`,
          userId: user.id,
          providerId: "credential",
          accountId: user.id,
          password: hash,
        },
      });
    await auditAdminChange(tx, ctx, {
      action: "user.create",
      target: { type: "user", id: user.id, label: email },
      after: {
        email,
        name,
        role,
        teams: teams.map((t) => t.slug).sort(),
        password: plain
          ? password === "generate"
            ? "one-time password generated"
            : "set by the admin"
          : "none (single sign-on only)",
      },
    });
    return { id: user.id, email, oneTimePassword: password === "generate" ? plain : null };
  });
}
