// Why a rollout step was refused, with the HTTP-like kind the console and the CLI map it to.
export class RolloutError extends Error {
  constructor(
    message: string,
    readonly kind: "not_found" | "conflict" | "invalid",
  ) {
    super(message);
    this.name = "RolloutError";
  }
}
