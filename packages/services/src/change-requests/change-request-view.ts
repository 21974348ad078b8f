// A change request as the console, the CLI and tests read it, and the refusals the services raise.
import type { Prisma, PrismaClient } from "@sluice/db";
import { findProducerFaultRequestIds } from "./producer-faults";
import { ServiceError } from "../service-error";

export const CHANGE_REQUEST_STATUSES = [
  "pending",
  "approved",
  "applied",
  "rejected",
  "cancelled",
  "failed",
  "stale",
] as const;
export type TChangeRequestStatus = (typeof CHANGE_REQUEST_STATUSES)[number];
export type TChangeRequestKind = "checkpoint_reset" | "schema_change" | "promotion";

export interface TChangeRequestView {
  id: string;
  kind: TChangeRequestKind;
  pipeline: string;
  version: number;
  status: TChangeRequestStatus;
  requestedBy: string;
  reason: string;
  payload: unknown;
  impact: unknown;
  decidedBy: string | null;
  decidedAt: Date | null;
  decisionNote: string;
  appliedAt: Date | null;
  result: unknown;
  createdAt: Date;
  updatedAt: Date;
  comments: { author: string; body: string; createdAt: Date }[];
}

/** A request that cannot be made or decided as asked; `kind` picks the answer at the edge (404, 409, 400, 403). */
export class ChangeRequestError extends ServiceError {}

type TDb = PrismaClient | Prisma.TransactionClient;

export async function getChangeRequest(db: TDb, id: bigint): Promise<TChangeRequestView | null> {
  const r = await db.changeRequest.findUnique({
    where: { id },
    include: { comments: { orderBy: { id: "asc" } } },
  });
  if (!r) return null;
  const [views] = await toViews(db, [r]);
  return views ?? null;
}

export async function findChangeRequests(
  db: PrismaClient,
  input: {
    status?: TChangeRequestStatus | "open";
    pipeline?: string;
    limit?: number;
    before?: string;
    /** Leave out pending requests that record a producer fault (producer-faults.ts): nothing to approve. */
    withoutProducerFaults?: boolean;
  } = {},
): Promise<TChangeRequestView[]> {
  const status = input.status === "open" ? { in: ["pending", "approved"] } : input.status;
  const pipelineId = input.pipeline
    ? ((await db.pipeline.findUnique({ where: { name: input.pipeline }, select: { id: true } }))?.id ?? "-")
    : undefined;
  const faults = input.withoutProducerFaults ? await findProducerFaultRequestIds(db) : [];
  const rows = await db.changeRequest.findMany({
    where: {
      ...(faults.length > 0 ? { id: { notIn: faults } } : {}),
      ...(status ? { status } : {}),
      ...(pipelineId ? { pipelineId } : {}),
      // Paging by id (newest first): stable while requests are raised, unlike an offset.
      ...(input.before ? { AND: [{ id: { lt: BigInt(input.before) } }] } : {}),
    },
    orderBy: { id: "desc" },
    take: Math.min(input.limit ?? 50, 200),
    include: { comments: { orderBy: { id: "asc" } } },
  });
  return toViews(db, rows);
}

type TRow = Prisma.ChangeRequestGetPayload<{ include: { comments: true } }>;

async function toViews(db: TDb, rows: TRow[]): Promise<TChangeRequestView[]> {
  const versions = await db.pipelineVersion.findMany({
    where: { id: { in: [...new Set(rows.map((r) => r.pipelineVersionId))] } },
    select: { id: true, version: true, pipeline: { select: { name: true } } },
  });
  const byId = new Map(versions.map((v) => [v.id, v]));
  return rows.map((r) => ({
    id: String(r.id),
    kind: r.kind as TChangeRequestKind,
    pipeline: byId.get(r.pipelineVersionId)?.pipeline.name ?? "(deleted)",
    version: byId.get(r.pipelineVersionId)?.version ?? 0,
    status: r.status as TChangeRequestStatus,
    requestedBy: r.requestedBy,
    reason: r.reason,
    payload: r.payload,
    impact: r.impact,
    decidedBy: r.decidedBy,
    decidedAt: r.decidedAt,
    decisionNote: r.decisionNote,
    appliedAt: r.appliedAt,
    result: r.result,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    comments: r.comments.map((c) => ({ author: c.author, body: c.body, createdAt: c.createdAt })),
  }));
}
