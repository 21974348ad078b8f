// The tRPC context from the auth library's session (no framework imports, so tests build it too).
import type { PrismaClient } from "@sluice/db";
import type { TBatchScheduler, TTopicOffsets } from "@sluice/services";
import type { Logger } from "pino";
import type { TAuth } from "../auth/create-auth";
import { requestOrigin } from "../auth/request-origin";
import { sessionActor } from "../auth/session-actor";
import type { TDataPlane, TTrpcContext } from "./context";

export interface TTrpcDeps {
  auth: TAuth;
  db: PrismaClient;
  logger: Logger;
  dataPlane: () => TDataPlane;
  scheduler?: TBatchScheduler;
  topicOffsets?: TTopicOffsets;
}

export async function buildTrpcContext(
  deps: TTrpcDeps,
  req: Request,
  resHeaders: Headers,
): Promise<TTrpcContext> {
  const user = await sessionActor(deps.auth, deps.db, req.headers);
  return {
    db: deps.db,
    user,
    logger: deps.logger,
    resHeaders,
    from: requestOrigin(req.headers),
    dataPlane: deps.dataPlane,
    ...(deps.scheduler ? { scheduler: deps.scheduler } : {}),
    ...(deps.topicOffsets ? { topicOffsets: deps.topicOffsets } : {}),
  };
}
