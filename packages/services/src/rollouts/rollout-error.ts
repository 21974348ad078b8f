// Why a rollout step was refused, with the HTTP-like kind the console and the CLI map it to.
import { ServiceError } from "../service-error";

export class RolloutError extends ServiceError {
  declare readonly kind: "not_found" | "conflict" | "invalid";
}
