// Per-request tRPC context: the database, the signed-in user (or null) and the response headers,
// through which auth procedures set and clear the session cookie.
import type { PrismaClient } from "@sluice/db";
import type { TSessionUser } from "@sluice/services";
import type { Logger } from "pino";

export interface TTrpcContext {
  db: PrismaClient;
  user: TSessionUser | null;
  logger: Logger;
  resHeaders: Headers;
  /** Whether the browser reached us over HTTPS (session cookies are then marked Secure). */
  https: boolean;
}
