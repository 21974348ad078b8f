// An error the command has already explained: main prints its message (no stack trace) and exits with
// its code (README "Exit codes").
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = "CliError";
  }
}
