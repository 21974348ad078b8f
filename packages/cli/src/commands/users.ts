// `sluice users create --email <e> --role <r> [--name <n>] [--team <slug>[,<slug>…]] [--as <admin>]`:
// people without single sign-on, and the first admin of a real install (only the demo seed creates
// users otherwise). The password is read from a prompt (hidden, asked twice) or, when stdin is not a
// terminal, from stdin — never from the command line, where shell history and `ps` would keep it.
//
// Who may: an admin (`--as` / SLUICE_ACTOR, the same decision as the console's Admin page). While the
// database has no enabled admin at all, the first admin may be created without one — whoever holds
// DATABASE_URL controls the install anyway — and the audit log says so. That "no admin" is decided
// again where the admin is created, under a lock (createUser's firstAdmin): of two first admins
// created at once, one is created and the other refused (exit 5).
import { createPrismaClient } from "@sluice/db";
import {
  ServiceError,
  createUser,
  FirstAdminExistsError,
  ZEmail,
  ZNewPassword,
  ZRole,
  type TAdminContext,
} from "@sluice/services";
import { hostname } from "node:os";
import { authorizeCli, EXIT_NOT_ALLOWED } from "../actor";
import { CliError } from "../cli-error";
import { connect } from "../connect";

export interface TUsersCreateOptions {
  email: string | undefined;
  role: string | undefined;
  name: string | undefined;
  teams: string | undefined;
  as: string | undefined;
  /** A --password flag was given: refused, with why. */
  passwordOnArgv: boolean;
}

export async function usersCreateCommand(opts: TUsersCreateOptions): Promise<number> {
  if (opts.passwordOnArgv)
    throw new CliError(
      "users create: the password is never given on the command line (shell history and `ps` would keep it): type it at the prompt, or pipe it on stdin, e.g. `printf '%s' \"$PW\" | npx sluice users create …`",
      1,
    );
  const email = ZEmail.safeParse(opts.email ?? "");
  if (!email.success) throw new CliError(`users create: --email: ${email.error.issues[0]!.message}`, 1);
  const role = ZRole.safeParse(opts.role ?? "");
  if (!role.success) throw new CliError(`users create: --role: ${role.error.issues[0]!.message}`, 1);
  const teamSlugs = (opts.teams ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);

  const services = await connect();
  const db = createPrismaClient(services.pool);
  try {
    const admins = await db.user.count({ where: { role: "admin", disabledAt: null } });
    let actor: TAdminContext["actor"];
    const firstAdmin = admins === 0;
    if (firstAdmin) {
      if (role.data !== "admin")
        throw new CliError(
          "users create: this Sluice has no admin yet: create the first admin first (--role admin), who then adds everyone else",
          1,
        );
      actor = { id: null, email: "system:cli (first admin of an install without one)" };
    } else {
      const who = await authorizeCli(db, opts.as, "admin.users", null);
      if (!who) return EXIT_NOT_ALLOWED;
      actor = who.actor;
    }
    const teams = await db.team.findMany({
      where: { slug: { in: teamSlugs } },
      select: { id: true, slug: true },
    });
    const unknown = teamSlugs.filter((s) => !teams.some((t) => t.slug === s));
    if (unknown.length > 0)
      throw new CliError(
        `users create: --team: no team with the slug ${unknown.map((s) => `"${s}"`).join(", ")} (see the console's Admin page → Teams)`,
        1,
      );

    const password = ZNewPassword.safeParse(await readPassword(email.data));
    if (!password.success) throw new CliError(`users create: ${password.error.issues[0]!.message}`, 1);
    const created = await createUser(
      db,
      { actor, from: { origin: "cli", userAgent: `sluice-cli on ${hostname()}` } },
      {
        email: email.data,
        name: opts.name?.trim() || email.data.split("@")[0]!,
        role: role.data,
        teamIds: teams.map((t) => t.id),
        password: password.data,
      },
      { firstAdmin },
    ).catch((err: unknown) => {
      if (err instanceof FirstAdminExistsError)
        throw new CliError(
          `users create: ${err.message} Nothing was created: ask them, or add people with --as <admin>.`,
          EXIT_NOT_ALLOWED,
        );
      if (err instanceof ServiceError) throw new CliError(`users create: ${err.message}`, 1);
      throw err;
    });
    console.log(
      `created ${role.data} ${created.email}${teamSlugs.length ? ` (teams: ${teamSlugs.join(", ")})` : ""}: they sign in to the console with the password just set, and can change it under Account and password`,
    );
    return 0;
  } finally {
    await db.$disconnect();
    await services.close();
  }
}

/** From a hidden prompt (asked twice) on a terminal, else all of stdin without its final newline. */
async function readPassword(email: string): Promise<string> {
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks)
      .toString("utf8")
      .replace(/\r?\n$/, "");
  }
  const first = await promptHidden(`password for ${email} (at least 10 characters): `);
  const again = await promptHidden("the same password again: ");
  if (first !== again) throw new CliError("users create: the two passwords differ; nothing was created", 1);
  return first;
}

/** Reads one line from the terminal without echoing it. */
function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = "";
    const finish = () => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
    };
    const onData = (typed: string) => {
      for (const ch of typed) {
        if (ch === "\r" || ch === "\n") {
          finish();
          return resolve(value);
        }
        if (ch === "\u0003" || ch === "\u0004") {
          finish();
          return reject(new CliError("users create: cancelled; nothing was created", 1));
        }
        value = ch === "\u007f" || ch === "\b" ? value.slice(0, -1) : value + ch;
      }
    };
    stdin.on("data", onData);
  });
}
