// A pipeline's webhook deliveries for the console and the CLI, from the engine's delivery ledger
// (webhook_deliveries): counts by status, and the deliveries themselves, newest first — or only the
// failed ones, which an operator can re-queue (requeue-webhook-deliveries.ts).
import { z } from "zod";
import type { PrismaClient } from "@sluice/db";

export const WEBHOOK_DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type TWebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export const ZFindWebhookDeliveriesInput = z.object({
  pipeline: z.string().min(1).max(200),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
  limit: z.number().int().min(1).max(1000).default(50),
});
export type TFindWebhookDeliveriesInput = z.input<typeof ZFindWebhookDeliveriesInput>;

export interface TWebhookDeliveryView {
  key: string;
  status: TWebhookDeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  /** What went wrong, the receiver's status only (never its body). */
  lastError: string | null;
  /**
   * The start of the receiver's last answer (it can say anything — an internal service's banner, a
   * stack trace): for the pipeline's owners and operators only (receivers/without-receiver-answers.ts).
   */
  lastResponse: string | null;
  /** The batch that first claimed the key. */
  batchId: number;
  createdAt: Date;
  lastAttemptAt: Date | null;
  deliveredAt: Date | null;
  /** When an operator last re-queued it after a failure. */
  requeuedAt: Date | null;
}

export type TWebhookDeliveryCounts = Record<TWebhookDeliveryStatus, number>;

export interface TWebhookDeliveries {
  pipeline: string;
  counts: TWebhookDeliveryCounts;
  /** At most `limit`, newest first; `counts` says how many there are in all. */
  deliveries: TWebhookDeliveryView[];
}

/** null when there is no pipeline of that name. */
export async function findWebhookDeliveries(
  db: PrismaClient,
  input: TFindWebhookDeliveriesInput,
): Promise<TWebhookDeliveries | null> {
  const { pipeline: name, status, limit } = ZFindWebhookDeliveriesInput.parse(input);
  const pipeline = await db.pipeline.findUnique({ where: { name }, select: { id: true } });
  if (!pipeline) return null;
  const [groups, rows] = await Promise.all([
    db.webhookDelivery.groupBy({
      by: ["status"],
      where: { pipelineId: pipeline.id },
      _count: { _all: true },
    }),
    db.webhookDelivery.findMany({
      where: { pipelineId: pipeline.id, ...(status ? { status } : {}) },
      orderBy: [{ createdAt: "desc" }, { idempotencyKey: "asc" }],
      take: limit,
    }),
  ]);
  return {
    pipeline: name,
    counts: countsOf(groups.map((g) => ({ status: g.status, n: g._count._all }))),
    deliveries: rows.map((r) => ({
      key: r.idempotencyKey,
      status: r.status as TWebhookDeliveryStatus,
      attempts: r.attempts,
      lastStatusCode: r.lastStatusCode,
      lastError: r.lastError,
      lastResponse: r.lastResponse,
      batchId: Number(r.batchId),
      createdAt: r.createdAt,
      lastAttemptAt: r.lastAttemptAt,
      deliveredAt: r.deliveredAt,
      requeuedAt: r.requeuedAt,
    })),
  };
}

export interface TWebhookPipelineSummary {
  pipeline: string;
  counts: TWebhookDeliveryCounts;
}

/** Every pipeline with webhook deliveries, by name, with its counts by status (for the fleet view). */
export async function summarizeWebhookDeliveries(db: PrismaClient): Promise<TWebhookPipelineSummary[]> {
  const groups = await db.webhookDelivery.groupBy({ by: ["pipelineId", "status"], _count: { _all: true } });
  if (groups.length === 0) return [];
  const pipelines = await db.pipeline.findMany({
    where: { id: { in: [...new Set(groups.map((g) => g.pipelineId))] } },
    select: { id: true, name: true },
  });
  return pipelines
    .map((p) => ({
      pipeline: p.name,
      counts: countsOf(
        groups.filter((g) => g.pipelineId === p.id).map((g) => ({ status: g.status, n: g._count._all })),
      ),
    }))
    .sort((a, b) => a.pipeline.localeCompare(b.pipeline));
}

function countsOf(groups: { status: string; n: number }[]): TWebhookDeliveryCounts {
  const counts: TWebhookDeliveryCounts = { pending: 0, delivered: 0, failed: 0 };
  for (const g of groups) if (g.status in counts) counts[g.status as TWebhookDeliveryStatus] = g.n;
  return counts;
}
