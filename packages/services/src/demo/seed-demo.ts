// Demo data for the quick start: teams with on-call contacts, one user per role (password sign-in,
// hashed by the auth library), an SSO group mapping to start from, and (once registered) demo
// pipelines. Idempotent: running it again only adds what is missing — including a password for a
// demo user from before sign-in moved to the auth library (their old scrypt hashes were not kept).
import { hashPassword } from "../auth/hash-password";
import type { PrismaClient, Role } from "@sluice/db";

export const DEMO_TEAMS = [
  { slug: "payments-data", name: "Payments Data", onCallEmail: "payments-oncall@sluice.local" },
  { slug: "risk", name: "Risk & Fraud", onCallEmail: "risk-oncall@sluice.local" },
] as const;

export const DEMO_USERS: { email: string; name: string; role: Role; team: string }[] = [
  { email: "admin@sluice.local", name: "Ada Admin", role: "admin", team: "payments-data" },
  { email: "owner@sluice.local", name: "Olu Owner", role: "owner", team: "payments-data" },
  { email: "operator@sluice.local", name: "Oona Operator", role: "operator", team: "payments-data" },
  { email: "oncall@sluice.local", name: "Cal On-call", role: "operator", team: "risk" },
  { email: "viewer@sluice.local", name: "Vic Viewer", role: "viewer", team: "risk" },
];

/** Identity-provider groups → role (and team): used only when single sign-on is configured. */
export const DEMO_SSO_MAPPINGS: { group: string; role: Role; team: string | null }[] = [
  { group: "sluice-admins", role: "admin", team: null },
  { group: "payments-engineers", role: "owner", team: "payments-data" },
  { group: "risk-oncall", role: "operator", team: "risk" },
  { group: "sluice-viewers", role: "viewer", team: null },
];

export async function seedDemo(db: PrismaClient, demoPassword: string): Promise<void> {
  const teamIds = new Map<string, string>();
  for (const team of DEMO_TEAMS) {
    const row = await db.team.upsert({ where: { slug: team.slug }, create: team, update: {} });
    teamIds.set(team.slug, row.id);
  }
  for (const user of DEMO_USERS) {
    const row =
      (await db.user.findUnique({ where: { email: user.email } })) ??
      (await db.user.create({
        data: {
          email: user.email,
          name: user.name,
          role: user.role,
          memberships: { create: { teamId: teamIds.get(user.team)! } },
        },
      }));
    const hasPassword = await db.account.count({ where: { userId: row.id, providerId: "credential" } });
    if (hasPassword === 0) {
      await db.account.create({
        data: {
          id: `credential-${row.id}`,
          userId: row.id,
          providerId: "credential",
          accountId: row.id,
          password: await hashPassword(demoPassword),
        },
      });
    }
  }
  for (const m of DEMO_SSO_MAPPINGS) {
    const teamId = m.team ? teamIds.get(m.team)! : null;
    const exists = await db.ssoGroupMapping.count({ where: { group: m.group, teamId } });
    if (exists === 0) await db.ssoGroupMapping.create({ data: { group: m.group, role: m.role, teamId } });
  }
}
