// /api/trpc: the cross-site check, the body read within its limit (body-limit.ts), then tRPC on the
// fetch adapter with the session's context.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "../trpc/root";
import { buildTrpcContext, type TTrpcDeps } from "../trpc/build-context";
import { BODY_LIMITS, TOO_LARGE_HEADERS, withBodyLimit } from "./body-limit";
import { crossSiteRefusal } from "./same-origin";

export function createTrpcHandler(deps: TTrpcDeps & { trustedOrigins: string[] }) {
  return async (received: Request): Promise<Response> => {
    const refusal = crossSiteRefusal(received, deps.trustedOrigins);
    if (refusal) {
      deps.logger.warn(
        { event: "csrf.refused", origin: received.headers.get("origin"), url: received.url },
        refusal,
      );
      return Response.json(
        { error: { message: refusal, code: -32003, data: { code: "FORBIDDEN", httpStatus: 403 } } },
        { status: 403 },
      );
    }
    const body = await withBodyLimit(received, BODY_LIMITS.trpc);
    if (!body.ok)
      return Response.json(
        {
          error: {
            message: body.message,
            code: -32600,
            data: { code: "PAYLOAD_TOO_LARGE", httpStatus: 413 },
          },
        },
        { status: 413, headers: TOO_LARGE_HEADERS },
      );
    const req = body.request;
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
