// Per-request tRPC context: the database, the signed-in actor (user, role, teams — or null), where
// the request came from (for the audit log) and the response headers.
import type { PrismaClient } from "@sluice/db";
import type { TActor, TAuditOrigin } from "@sluice/services";
import type { Kafka } from "kafkajs";
import type pg from "pg";
import type { Logger } from "pino";

/** The engine's resources, for registering and dry-running drafts (made on first use). */
export interface TDataPlane {
  pool: pg.Pool;
  kafka: Kafka;
}

export interface TTrpcContext {
  db: PrismaClient;
  user: TActor | null;
  logger: Logger;
  resHeaders: Headers;
  from: TAuditOrigin;
  dataPlane: () => TDataPlane;
}
