// `sluice users create`: the first admin of an empty install, then people added by an admin, each with
// a password that never appears on the command line. The created password is the one the console's
// sign-in verifies (the auth library's scrypt); refusals exit 1 (bad input) or 5 (not allowed) and
// create nothing.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyPassword } from "@sluice/services";
import { createTestDatabase, createTestUsers, endPool, type TestDatabase } from "@sluice/testing";
import { runSluice, sluiceResult, spawnSluice } from "@sluice/engine/testing";

let database: TestDatabase;
let pool: pg.Pool;

/** Runs the CLI with `stdin` piped in (not a terminal: the password is read from it), SLUICE_ACTOR empty. */
const sluice = (stdin: string, ...args: string[]) =>
  runSluice(args, { databaseUrl: database.url, actor: "", input: stdin });

async function passwordOf(email: string): Promise<string | null> {
  const { rows } = await pool.query<{ password: string | null }>(
    `SELECT a.password FROM accounts a JOIN users u ON u.id = a.user_id WHERE u.email = $1 AND a.provider_id = 'credential'`,
    [email],
  );
  return rows[0]?.password ?? null;
}

const users = async () =>
  (await pool.query<{ email: string; role: string }>(`SELECT email, role::text FROM users ORDER BY email`))
    .rows;

beforeAll(async () => {
  database = await createTestDatabase("cli_users");
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
});
afterAll(async () => {
  await endPool(pool);
  await database?.drop();
});

// Each case starts the CLI several times (a process each, ~2 s apiece on a quiet machine, far more on
// a loaded one): an outer bound per test, not a measurement.
describe("sluice users create", { timeout: 600_000 }, () => {
  it("an empty install gets its first admin without --as; the password is read from stdin and is the one sign-in verifies", async () => {
    expect(await users()).toEqual([]);
    // Not an admin first: nobody could add anyone afterwards.
    const owner = await sluice(
      "a-long-password\n",
      "users",
      "create",
      "--email",
      "pat@example.com",
      "--role",
      "owner",
    );
    expect(owner.code).toBe(1);
    expect(owner.stderr).toMatch(/has no admin yet: create the first admin first \(--role admin\)/);

    const r = await sluice(
      "first-admin-password\n",
      "users",
      "create",
      "--email",
      "Ada@Example.com",
      "--role",
      "admin",
      "--name",
      "Ada Admin",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^created admin ada@example\.com/);
    expect(await users()).toEqual([{ email: "ada@example.com", role: "admin" }]);
    const hash = (await passwordOf("ada@example.com"))!;
    expect(await verifyPassword(hash, "first-admin-password")).toBe(true);
    expect(await verifyPassword(hash, "first-admin-password\n")).toBe(false);
    const { rows } = await pool.query(
      `SELECT actor, actor_user_id, action, origin, target_label FROM audit_events WHERE action = 'user.create'`,
    );
    expect(rows).toEqual([
      {
        actor: "system:cli (first admin of an install without one)",
        actor_user_id: null,
        action: "user.create",
        origin: "cli",
        target_label: "ada@example.com",
      },
    ]);
  });

  it("once an admin exists, only an admin may add people (exit 5 otherwise), with teams by slug", async () => {
    await createTestUsers(pool, [{ email: "olly@example.com", role: "operator", teams: ["payments"] }]);
    const noActor = await sluice(
      "another-password\n",
      "users",
      "create",
      "--email",
      "vic@example.com",
      "--role",
      "viewer",
    );
    expect(noActor.code).toBe(5);
    expect(noActor.stderr).toMatch(/who is acting\?/);
    const operator = await sluice(
      "another-password\n",
      "users",
      "create",
      "--email",
      "vic@example.com",
      "--role",
      "viewer",
      "--as",
      "olly@example.com",
    );
    expect(operator.code).toBe(5);

    const admin = await sluice(
      "owners-password-1\n",
      "users",
      "create",
      "--email",
      "owen@example.com",
      "--role",
      "owner",
      "--team",
      "payments",
      "--as",
      "ada@example.com",
    );
    expect(admin.code).toBe(0);
    const { rows } = await pool.query(
      `SELECT t.slug FROM team_members m JOIN teams t ON t.id = m.team_id JOIN users u ON u.id = m.user_id WHERE u.email = 'owen@example.com'`,
    );
    expect(rows).toEqual([{ slug: "payments" }]);
    expect(await passwordOf("owen@example.com")).toBeTruthy();
  });

  it("a password on the command line is refused before anything is read, and nothing is created", async () => {
    for (const args of [["--password", "on-the-argv-1"], ["--password=on-the-argv-1"]]) {
      const r = await sluice(
        "",
        "users",
        "create",
        "--email",
        "argv@example.com",
        "--role",
        "viewer",
        ...args,
        "--as",
        "ada@example.com",
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/never given on the command line/);
    }
    expect((await users()).map((u) => u.email)).not.toContain("argv@example.com");
  });

  it("bad input exits 1 naming it: short password, unknown team, bad email or role, an existing email", async () => {
    const as = ["--as", "ada@example.com"];
    const cases: [string, string[], RegExp][] = [
      ["short\n", ["--email", "s@example.com", "--role", "viewer"], /at least 10 characters/],
      [
        "long-enough-pw\n",
        ["--email", "t@example.com", "--role", "viewer", "--team", "payments,nope"],
        /no team with the slug "nope"/,
      ],
      [
        "long-enough-pw\n",
        ["--email", "not-an-email", "--role", "viewer"],
        /--email: Enter an email address/,
      ],
      [
        "long-enough-pw\n",
        ["--email", "r@example.com", "--role", "root"],
        /--role: Choose a role: viewer, operator, owner, admin/,
      ],
      [
        "long-enough-pw\n",
        ["--email", "owen@example.com", "--role", "viewer"],
        /A user with email owen@example\.com exists already/,
      ],
    ];
    for (const [stdin, args, message] of cases) {
      const r = await sluice(stdin, "users", "create", ...args, ...as);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr).toMatch(message);
    }
    expect((await users()).map((u) => u.email).sort()).toEqual([
      "ada@example.com",
      "olly@example.com",
      "owen@example.com",
    ]);
  });

  it("first-admin race: two `users create --role admin` at once on an empty install create exactly one admin; the other exits 5 and creates nothing", async () => {
    const empty = await createTestDatabase("cli_users_race");
    const racePool = new pg.Pool({ connectionString: empty.url, max: 1 });
    try {
      // A team to join makes each process look it up after its "is there an admin?" check, just before
      // it reads the password: both are held there, each having seen no admin, then both go on at once.
      await racePool.query(`INSERT INTO teams (id, slug, name) VALUES ('t-ops', 'ops', 'Ops')`);
      // Each CLI's stdin (the password) stays open until both are held.
      const runs = ["ann", "bob"].map((who) =>
        spawnSluice(
          ["users", "create", "--email", `${who}@example.com`, "--role", "admin", "--team", "ops"],
          { databaseUrl: empty.url, actor: "", holdStdin: true },
        ),
      );
      const waiting = async () =>
        (
          await racePool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle' AND query LIKE '%"teams"%'`,
          )
        ).rows[0]!.n;
      const deadline = Date.now() + 300_000;
      while ((await waiting()) < 2) {
        if (Date.now() > deadline) throw new Error("the two CLIs never both reached the password");
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await racePool.query(`SELECT count(*)::int AS n FROM users`)).rows[0].n).toBe(0);
      for (const run of runs) run.child.stdin!.end("first-admin-password\n");
      const results = await Promise.all(runs.map(sluiceResult));

      expect(results.map((r) => r.code).sort()).toEqual([0, 5]);
      const loser = results.find((r) => r.code === 5)!;
      expect(loser.stderr).toMatch(
        /This install has an admin now \((ann|bob)@example\.com, created meanwhile\).*Nothing was created: ask them, or add people with --as <admin>/,
      );
      const created = (
        await racePool.query<{ email: string; role: string }>(`SELECT email, role::text FROM users`)
      ).rows;
      expect(created).toHaveLength(1);
      expect(created[0]!.role).toBe("admin");
      expect(results.find((r) => r.code === 0)!.stdout).toContain(`created admin ${created[0]!.email}`);
      const audited = await racePool.query(
        `SELECT target_label FROM audit_events WHERE action = 'user.create'`,
      );
      expect(audited.rows).toEqual([{ target_label: created[0]!.email }]);
    } finally {
      await endPool(racePool);
      await empty.drop();
    }
  });
});
