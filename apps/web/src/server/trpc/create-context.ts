import "server-only";
import { getSessionUser } from "@sluice/services";
import type { FetchCreateContextFnOptions } from "@trpc/server/adapters/fetch";
import { db } from "../db";
import { logger } from "../logger";
import { isHttpsRequest, readSessionCookie } from "../session/session-cookie";
import { readSessionClaims } from "../session/session";
import type { TTrpcContext } from "./context";

export async function createTrpcContext({
  req,
  resHeaders,
}: FetchCreateContextFnOptions): Promise<TTrpcContext> {
  const claims = readSessionClaims(readSessionCookie(req.headers.get("cookie")));
  const user = claims ? await getSessionUser(db(), claims.userId) : null;
  return { db: db(), user, logger: logger(), resHeaders, https: isHttpsRequest(req) };
}
