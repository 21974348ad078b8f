// Tiny argument parsing for the sluice command: a command, positionals and --flags.

export interface ParsedArgs {
  command: string | undefined;
  positionals: string[];
  flags: Set<string>;
}

export function parseArgs(argv: string[]): ParsedArgs {
  const [command, ...rest] = argv;
  return {
    command,
    positionals: rest.filter((a) => !a.startsWith("--")),
    flags: new Set(rest.filter((a) => a.startsWith("--")).map((a) => a.slice(2))),
  };
}

export const USAGE = `usage: sluice <command>

  sluice validate <spec.yaml|json> [--against-registered]
                                       check a pipeline spec; prints every error with its path. With
                                       --against-registered, also whether a new version could continue
                                       the registered version's state (DATABASE_URL), and why not
  sluice run <spec.yaml|json> [--once | --until-caught-up] [--fresh-state]
                                       run the pipeline in the foreground against DATABASE_URL and
                                       KAFKA_BROKERS: registers the version if new, resumes from its
                                       checkpoint if not, prints one progress line per batch. A changed
                                       spec continues the previous version's state, or is refused with
                                       the reasons when it cannot; --fresh-state starts it anew instead
  sluice status <pipeline>             the pipeline's versions, run state, checkpoint, recent batches, failures
  sluice start <spec.yaml|pipeline> [reason] [--fresh-state]
                                       run the pipeline on the worker processes (registers the spec
                                       first when given a file); pause, resume, stop and restart
  sluice pause|resume|stop|restart <pipeline> [reason]
                                       (after a failure) likewise; each change is recorded with who,
                                       when and why (table pipeline_run_transitions)

exit codes: 0 ok, 1 invalid spec or configuration, 2 transient failure, 3 fenced off by another
runner, 4 stopped by a fail expectation`;
