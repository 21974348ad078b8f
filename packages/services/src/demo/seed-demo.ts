// Demo data for the quick start: teams, one user per role, and (once registered) demo pipelines.
// Idempotent: running it again changes nothing but missing rows.
import type { PrismaClient, Role } from "@sluice/db";
import { hashPassword } from "../auth/password";

export const DEMO_TEAMS = [
  { slug: "payments-data", name: "Payments Data" },
  { slug: "risk", name: "Risk & Fraud" },
] as const;

export const DEMO_USERS: { email: string; name: string; role: Role; team: string }[] = [
  { email: "admin@sluice.local", name: "Ada Admin", role: "admin", team: "payments-data" },
  { email: "owner@sluice.local", name: "Olu Owner", role: "owner", team: "payments-data" },
  { email: "operator@sluice.local", name: "Oona Operator", role: "operator", team: "payments-data" },
  { email: "oncall@sluice.local", name: "Cal On-call", role: "operator", team: "risk" },
  { email: "viewer@sluice.local", name: "Vic Viewer", role: "viewer", team: "risk" },
];

export async function seedDemo(db: PrismaClient, demoPassword: string): Promise<void> {
  for (const team of DEMO_TEAMS) {
    await db.team.upsert({ where: { slug: team.slug }, create: team, update: {} });
  }
  for (const user of DEMO_USERS) {
    const existing = await db.user.findUnique({ where: { email: user.email } });
    if (existing) continue;
    const team = await db.team.findUniqueOrThrow({ where: { slug: user.team } });
    await db.user.create({
      data: {
        email: user.email,
        name: user.name,
        role: user.role,
        passwordHash: await hashPassword(demoPassword),
        memberships: { create: { teamId: team.id } },
      },
    });
  }
}
