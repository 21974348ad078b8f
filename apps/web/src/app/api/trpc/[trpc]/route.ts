import { auth } from "@/server/auth/auth";
import { batchScheduler, topicOffsets } from "@/server/batch-scheduler";
import { dataPlane } from "@/server/data-plane";
import { db } from "@/server/db";
import { webEnv } from "@/server/env";
import { createTrpcHandler } from "@/server/http/trpc-handler";
import { logger } from "@/server/logger";
import { countRequests } from "@/server/metrics/registry";
import { consoleOrigins } from "@/server/web-env";

let trpc: ((req: Request) => Promise<Response>) | undefined;

const handler = countRequests("/api/trpc", (req: Request) => {
  trpc ??= createTrpcHandler({
    auth: auth(),
    db: db(),
    dataPlane,
    logger: logger(),
    scheduler: batchScheduler(),
    topicOffsets: topicOffsets(),
    trustedOrigins: consoleOrigins(webEnv()).trustedOrigins,
  });
  return trpc(req);
});

export { handler as GET, handler as POST };
