// Demo data for the quick start: teams with on-call contacts, one user per role (password sign-in,
// hashed by the auth library), an SSO group mapping to start from, (once registered) demo pipelines,
// and — given the demo on-call receiver's address — each team's contact points paging it (Slack,
// PagerDuty and email), so the first alert a newcomer causes visibly pages someone. Idempotent: running it again only adds what is missing — including a password for a
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

/** A made-up 32-character PagerDuty routing key per demo team (the demo receiver accepts any). */
const demoRoutingKey = (slug: string) => `demo${slug.replace(/[^a-z0-9]/g, "")}`.padEnd(32, "0").slice(0, 32);

export async function seedDemo(
  db: PrismaClient,
  demoPassword: string,
  opts: { onCallReceiverUrl?: string } = {},
): Promise<void> {
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
  if (opts.onCallReceiverUrl) await seedDemoContactPoints(db, teamIds, opts.onCallReceiverUrl);
  for (const m of DEMO_SSO_MAPPINGS) {
    const teamId = m.team ? teamIds.get(m.team)! : null;
    const exists = await db.ssoGroupMapping.count({ where: { group: m.group, teamId } });
    if (exists === 0) await db.ssoGroupMapping.create({ data: { group: m.group, role: m.role, teamId } });
  }
}

/** Each demo team pages the demo receiver three ways; a contact point an admin changed is kept. */
async function seedDemoContactPoints(
  db: PrismaClient,
  teamIds: Map<string, string>,
  url: string,
): Promise<void> {
  const base = url.replace(/\/+$/, "");
  for (const team of DEMO_TEAMS) {
    const teamId = teamIds.get(team.slug)!;
    const points = [
      { name: `#${team.slug}-oncall`, kind: "slack", secretValue: `${base}/slack/${team.slug}-oncall` },
      {
        name: "PagerDuty (demo)",
        kind: "pagerduty",
        secretValue: demoRoutingKey(team.slug),
        endpoint: `${base}/pagerduty/v2/enqueue`,
      },
      { name: "on-call mailbox", kind: "email", addresses: [team.onCallEmail] },
    ];
    for (const p of points) {
      const exists = await db.contactPoint.count({ where: { teamId, name: p.name } });
      if (exists === 0) await db.contactPoint.create({ data: { teamId, createdBy: "demo seed", ...p } });
    }
  }
}
