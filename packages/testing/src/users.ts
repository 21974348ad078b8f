// People for tests that act as a user (the CLI's SLUICE_ACTOR, the console's sessions): users with a
// role and teams, created with the teams if missing. No password: these users never sign in.
import { randomBytes } from "node:crypto";
import type pg from "pg";

export interface TTestUser {
  email: string;
  role: "viewer" | "operator" | "owner" | "admin";
  teams?: string[];
  disabled?: boolean;
}

const id = () => `t${randomBytes(10).toString("hex")}`;

export async function createTestUsers(pool: pg.Pool, users: TTestUser[]): Promise<void> {
  for (const u of users) {
    const userId = id();
    await pool.query(
      `INSERT INTO users (id, email, name, role, disabled_at) VALUES ($1, $2, $2, $3::"Role", CASE WHEN $4 THEN now() END)`,
      [userId, u.email, u.role, u.disabled ?? false],
    );
    for (const slug of u.teams ?? []) {
      const team = await pool.query<{ id: string }>(
        `INSERT INTO teams (id, slug, name) VALUES ($1, $2, $2) ON CONFLICT (slug) DO UPDATE SET slug = EXCLUDED.slug RETURNING id`,
        [id(), slug],
      );
      await pool.query(`INSERT INTO team_members (team_id, user_id) VALUES ($1, $2)`, [
        team.rows[0]!.id,
        userId,
      ]);
    }
  }
}
