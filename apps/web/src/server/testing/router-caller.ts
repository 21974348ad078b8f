// For router unit tests: a caller of a router built from the real middleware, with a context that
// carries no database — every check such a test makes (sign-in, role, input) is decided before one
// would be needed — and a user of a given role in no team.
import type { TActor, TRole } from "@sluice/services";
import type { AnyRouter } from "@trpc/server";
import pino from "pino";
import type { TTrpcContext } from "../trpc/context";
import { createCallerFactory } from "../trpc/init";

export const userWith = (role: TRole): TActor => ({
  id: `u_${role}`,
  email: `${role}@sluice.local`,
  name: role,
  role,
  teams: [],
});

export function callerOf<R extends AnyRouter>(
  router: R,
): (user: TActor | null) => ReturnType<R["createCaller"]> {
  const factory = createCallerFactory(router);
  return (user) =>
    factory({
      user,
      db: undefined as never,
      logger: pino({ level: "silent" }),
      resHeaders: new Headers(),
      from: { origin: "web" },
      dataPlane: undefined as never,
    } satisfies TTrpcContext) as ReturnType<R["createCaller"]>;
}
