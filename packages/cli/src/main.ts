// The sluice command line: validate, run and inspect pipelines. See README "The sluice command".
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { isRetriable } from "@sluice/engine";
import { parseArgs, USAGE } from "./args";
import { CliError } from "./cli-error";
import { alertsListCommand, alertsRespondCommand, alertsSilenceCommand } from "./commands/alerts";
import { dbCommand } from "./commands/db";
import { lifecycleCommand } from "./commands/lifecycle";
import { resetCommand } from "./commands/reset";
import { rolloutCommand } from "./commands/rollout";
import { runCommand } from "./commands/run";
import { signingSecretCommand } from "./commands/signing-secret";
import { statusCommand } from "./commands/status";
import { usersCreateCommand } from "./commands/users";
import { validateCommand } from "./commands/validate";
import { webhooksCommand, webhooksRetryCommand } from "./commands/webhooks";
import { FRESH_STATE_FLAG } from "./registration";

async function main(argv: string[]): Promise<number> {
  const { command, positionals, flags, values, errors } = parseArgs(argv);
  const target = positionals[0] ?? (command === "signing-secret" ? values.get("team") : undefined);
  if (!command || command === "help" || flags.has("help") || !target) {
    console.error(USAGE);
    return command === "help" || flags.has("help") ? 0 : 1;
  }
  if (errors.length > 0) {
    console.error(errors.join("\n"));
    return 1;
  }
  switch (command) {
    case "validate":
      return validateCommand(target, { againstRegistered: flags.has("against-registered") });
    case "run":
      if (flags.has("once") && flags.has("until-caught-up")) {
        console.error("choose one of --once and --until-caught-up");
        return 1;
      }
      return runCommand(
        target,
        flags.has("once") ? "once" : flags.has("until-caught-up") ? "until-caught-up" : "continuous",
        { freshState: flags.has(FRESH_STATE_FLAG), as: values.get("as"), group: values.get("group") },
      );
    case "status":
      return statusCommand(target);
    case "start":
    case "pause":
    case "resume":
    case "stop":
    case "restart":
      return lifecycleCommand(command, target, positionals.slice(1).join(" "), {
        freshState: flags.has(FRESH_STATE_FLAG),
        as: values.get("as"),
        version: values.get("version"),
      });
    case "db":
      return dbCommand(target);
    case "reset":
      return resetCommand(target, {
        to: values.get("to"),
        clearState: flags.has("clear-state"),
        reason: positionals.slice(1).join(" "),
        as: values.get("as"),
        version: values.get("version"),
      });
    case "rollout":
      return rolloutCommand(target, positionals[1], {
        from: values.get("from"),
        keepPrevious: values.get("keep-previous"),
        reason: positionals.slice(2).join(" "),
        as: values.get("as"),
      });
    case "signing-secret": {
      const team = values.get("team");
      return signingSecretCommand(team ? { team } : { pipeline: target }, { as: values.get("as") });
    }
    case "webhooks": {
      if (target !== "retry") return webhooksCommand(target, { failedOnly: flags.has("failed") });
      const pipeline = positionals[1];
      if (!pipeline) {
        console.error(
          `which pipeline? npx sluice webhooks retry <pipeline> [--key <key>] [reason]\n\n${USAGE}`,
        );
        return 1;
      }
      const key = values.get("key");
      return webhooksRetryCommand(pipeline, {
        ...(key ? { key } : {}),
        reason: positionals.slice(2).join(" "),
        as: values.get("as"),
      });
    }
    case "users": {
      if (target !== "create") {
        console.error(`users: create\n\n${USAGE}`);
        return 1;
      }
      return usersCreateCommand({
        email: values.get("email"),
        role: values.get("role"),
        name: values.get("name"),
        teams: values.get("team"),
        as: values.get("as"),
        passwordOnArgv: flags.has("password") || [...flags].some((f) => f.startsWith("password=")),
      });
    }
    case "alerts": {
      const rest = positionals.slice(1);
      if (target === "list") return alertsListCommand(rest[0], { all: flags.has("all") });
      if (target === "ack" || target === "resolve")
        return alertsRespondCommand(target, rest[0], rest.slice(1).join(" "), { as: values.get("as") });
      if (target === "silence")
        return alertsSilenceCommand(rest[0], rest.slice(1).join(" "), {
          for: values.get("for"),
          rule: values.get("rule"),
          as: values.get("as"),
        });
      console.error(`alerts: list, ack, resolve or silence\n\n${USAGE}`);
      return 1;
    }
    default:
      console.error(`unknown command "${command}"\n\n${USAGE}`);
      return 1;
  }
}

/**
 * Every failure ends here as one line saying what is wrong — never a stack trace (LOG_LEVEL=debug or
 * trace adds it) — and the exit code of README "Exit codes": 2 when a retry may get past it, else 1.
 */
function reportFailure(err: unknown): number {
  if (err instanceof CliError) {
    console.error(err.message);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  console.error(`sluice: ${message}`);
  const level = loadEnv(ZServiceEnv.pick({ LOG_LEVEL: true })).LOG_LEVEL;
  if ((level === "debug" || level === "trace") && err instanceof Error && err.stack) console.error(err.stack);
  return isRetriable(err) ? 2 : 1;
}

process.exitCode = await main(process.argv.slice(2)).catch(reportFailure);
