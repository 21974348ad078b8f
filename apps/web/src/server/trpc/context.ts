// Per-request tRPC context: the database, the signed-in actor (user, role, teams — or null), where
// the request came from (for the audit log) and the response headers.
import type { PrismaClient } from "@sluice/db";
import type { TActor, TAuditOrigin, TAuditWho, TBatchScheduler, TTopicOffsets } from "@sluice/services";
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
  /** Queues a started pipeline's first batch at once (absent in tests: the reconciler does it). */
  scheduler?: TBatchScheduler;
  /** Kafka's partition bounds and offsets-for-times, for checkpoint reset requests. */
  topicOffsets?: TTopicOffsets;
}

/** The signed-in user as the audit log records them. */
export function auditWho(ctx: { user: TActor; from: TAuditOrigin }): TAuditWho {
  return { actorUserId: ctx.user.id, actor: ctx.user.email, from: ctx.from };
}
