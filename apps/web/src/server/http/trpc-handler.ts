// /api/trpc: the cross-site check, then tRPC on the fetch adapter with the session's context.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "../trpc/root";
import { buildTrpcContext, type TTrpcDeps } from "../trpc/build-context";
import { crossSiteRefusal } from "./same-origin";

export function createTrpcHandler(deps: TTrpcDeps & { trustedOrigins: string[] }) {
  return async (req: Request): Promise<Response> => {
    const refusal = crossSiteRefusal(req, deps.trustedOrigins);
    if (refusal) {
      deps.logger.warn({ event: "csrf.refused", origin: req.headers.get("origin"), url: req.url }, refusal);
      return Response.json(
        { error: { message: refusal, code: -32003, data: { code: "FORBIDDEN", httpStatus: 403 } } },
        { status: 403 },
      );
    }
    return fetchRequestHandler({
      endpoint: "/api/trpc",
      req,
      router: appRouter,
      // Draft queries (check, dry run) carry a whole spec: the client sends them as POST (trpc/react.tsx).
      allowMethodOverride: true,
      createContext: ({ resHeaders }) => buildTrpcContext(deps, req, resHeaders),
      onError: ({ path, error }) => {
        // Expected refusals (bad input, no session, wrong role) are not server errors.
        if (error.code === "INTERNAL_SERVER_ERROR")
          deps.logger.error({ path, err: error.cause ?? error }, "tRPC procedure failed");
      },
    });
  };
}
