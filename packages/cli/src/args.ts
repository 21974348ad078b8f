// Tiny argument parsing for the sluice command: a command, positionals, --flags and --options with a
// value (`--key K` or `--key=K`).

export interface ParsedArgs {
  command: string | undefined;
  positionals: string[];
  flags: Set<string>;
  values: Map<string, string>;
  /** e.g. an option given without its value. */
  errors: string[];
}

/** The options that take a value; every other --name is a flag. */
const VALUE_OPTIONS = new Set([
  "key",
  "as",
  "for",
  "rule",
  "to",
  "team",
  "version",
  "email",
  "role",
  "name",
  "from",
  "keep-previous",
  "group",
]);

export function parseArgs(argv: string[]): ParsedArgs {
  const [command, ...rest] = argv;
  const parsed: ParsedArgs = { command, positionals: [], flags: new Set(), values: new Map(), errors: [] };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (!arg.startsWith("--")) {
      parsed.positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (!VALUE_OPTIONS.has(name)) {
      parsed.flags.add(arg.slice(2));
      continue;
    }
    const value = eq === -1 ? rest[++i] : arg.slice(eq + 1);
    if (value === undefined || value === "")
      parsed.errors.push(`--${name} needs a value, e.g. --${name} <value>`);
    else parsed.values.set(name, value);
  }
  return parsed;
}

export const USAGE = `usage: sluice <command>

  sluice validate <spec.yaml|json> [--against-registered]
                                       check a pipeline spec; prints every error with its path. With
                                       --against-registered, also whether a new version could continue
                                       the registered version's state (DATABASE_URL), and why not
  sluice run <spec.yaml|json> [--once | --until-caught-up] [--fresh-state] [--group <g>]
                                       run the pipeline in the foreground against DATABASE_URL and
                                       KAFKA_BROKERS: registers the version if new, resumes from its
                                       checkpoint if not, prints one progress line per batch. A changed
                                       spec continues the previous version's state, or is refused with
                                       the reasons when it cannot; --fresh-state starts it anew instead.
                                       A spec with source.kafka.parallelism N runs one process per
                                       partition group: --group 0 … N−1, on any machines
  sluice status <pipeline>             the pipeline's versions, run state, checkpoint, recent batches, failures
  sluice start <spec.yaml|pipeline> [reason] [--fresh-state]
                                       run the pipeline on the worker processes (registers the spec
                                       first when given a file); pause, resume, stop and restart
  sluice pause|resume|stop|restart <pipeline> [reason]
                                       (after a failure) likewise; each change is recorded with who,
                                       when and why (table pipeline_run_transitions)
  sluice <lifecycle command> <pipeline>@<version> [reason]   (or --version <version>)
                                       act on that version only (default: the serving one); the
                                       output says which other versions still run
  sluice db migrate                    create the database of DATABASE_URL if it does not exist and
                                       apply Sluice's migrations (what npm run db:migrate runs)
  sluice db status                     whether that database has every migration of this version
  sluice webhooks <pipeline> [--failed]
                                       a webhook pipeline's deliveries (table webhook_deliveries):
                                       counts by status and the newest deliveries, or every failed one
  sluice webhooks retry <pipeline> [--key K] [reason]
                                       re-queue the failed deliveries (or the one with idempotency key K)
                                       with the same keys; the workers running the pipeline send them
                                       again. Recorded with who and why (table webhook_requeues)
  sluice signing-secret <pipeline> | --team <slug>
                                       the Standard Webhooks secret a receiver verifies a pipeline's
                                       webhook (its team's owners) or a team's alert notifications
                                       (admins) with; needs SLUICE_SIGNING_KEY, audited
  sluice users create --email <email> --role <viewer|operator|owner|admin> [--name <name>]
                     [--team <slug>[,<slug>…]]
                                       add a person who signs in with a password (the first admin of a
                                       new install needs no --as; later ones are added by an admin).
                                       The password is typed at a hidden prompt or piped on stdin,
                                       never given as an argument
  sluice alerts list [pipeline] [--all]
                                       firing and acknowledged alerts, problems first (--all: and those
                                       resolved in the last 24 hours), with their notifications' delivery
  sluice alerts ack|resolve <alert #> [note]
                                       acknowledge (reminders stop) or resolve an alert by hand
  sluice alerts silence <pipeline> --for <duration> [--rule <kind>] <reason>
                                       no notifications for the pipeline (or one rule) until it expires;
                                       the alerts are still evaluated and shown

  sluice reset <pipeline[@version]> --to earliest|latest|<ISO time>|<p:offset,…> [--clear-state] reason
                                       ask for a checkpoint reset: prints its impact per partition (or
                                       why it is refused) and raises a change request that someone else
                                       approves in the console; the CLI never applies one

  sluice rollout start <spec> [--from earliest|blue|<ISO time>] [--keep-previous 7d] reason
                                       run the spec's new version beside the serving one (a candidate,
                                       in tables of its own) from the topic's earliest offsets, blue's
                                       own starting offsets, or a point in time; --keep-previous (hours
                                       "72h" or days "7d", default 7d): how long the side a promotion
                                       or rollback stops keeps its state and tables for undoing it
  sluice rollout promote|rollback|abort <pipeline> reason
                                       ask for the promotion (someone else approves it in the console),
                                       switch readers back to blue, or discard the running candidate
  sluice rollout reconcile <pipeline>  compare what blue and green have both committed now (the workers
                                       do every minute) and print each output's result

Commands that change something (run, start, pause, resume, stop, restart, webhooks retry, alerts
ack|resolve|silence, reset, rollout) and signing-secret act as a Sluice user: --as <email> or SLUICE_ACTOR=<email>, allowed by
that user's role and teams.

exit codes: 0 ok, 1 invalid spec or configuration (or an unknown pipeline, a key that is not failed,
a database that is missing or not migrated), 2 transient failure (after retries), 3 fenced off by
another runner, 4 stopped by a fail expectation, 5 not allowed (no or unknown --as/SLUICE_ACTOR, or
its role or team may not do this)`;
