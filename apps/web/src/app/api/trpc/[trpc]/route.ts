import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { logger } from "@/server/logger";
import { countRequests } from "@/server/metrics/registry";
import { createTrpcContext } from "@/server/trpc/create-context";
import { appRouter } from "@/server/trpc/root";

const handler = countRequests("/api/trpc", (req: Request) =>
  fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: createTrpcContext,
    onError: ({ path, error }) => {
      // Expected refusals (bad input, no session, wrong role) are not server errors.
      if (error.code === "INTERNAL_SERVER_ERROR")
        logger().error({ path, err: error.cause ?? error }, "tRPC procedure failed");
    },
  }),
);

export { handler as GET, handler as POST };
