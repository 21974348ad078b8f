// One family for what a service refuses to do as asked — an unknown pipeline, a request already
// decided, an invalid step. The message is the sentence the person reads, whatever the edge (console,
// CLI); `kind` is the only thing an edge maps: the console's one tRPC middleware turns it into 404,
// 409, 400 or 403 (apps/web/src/server/trpc/init.ts), the CLI prints the message and exits 1. Anything
// else thrown from a service is a failure, not a refusal, and is reported as one.
export type TServiceErrorKind = "not_found" | "conflict" | "invalid" | "forbidden";

export class ServiceError extends Error {
  constructor(
    message: string,
    readonly kind: TServiceErrorKind,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
