// A service refusal (change requests, rollouts) becomes the tRPC error its `kind` names, with the
// service's own message: what the person reads is the sentence the service wrote.
import { ChangeRequestError, RolloutError } from "@sluice/services";
import { TRPCError } from "@trpc/server";

const CODE = {
  not_found: "NOT_FOUND",
  conflict: "CONFLICT",
  invalid: "BAD_REQUEST",
  forbidden: "FORBIDDEN",
} as const;

export async function answer<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ChangeRequestError || err instanceof RolloutError)
      throw new TRPCError({ code: CODE[err.kind], message: err.message });
    throw err;
  }
}
