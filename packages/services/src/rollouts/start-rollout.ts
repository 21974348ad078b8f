// Starting a rollout (console, `sluice rollout start <spec>`): the spec is registered as a candidate
// (green) — fresh state, physical tables of its own, not serving, never fencing the serving version
// (blue) — and runs beside blue from the offsets asked for: the topic's earliest, a point in time, or
// blue's own starting offsets (where blue's lineage read its first batch). Offsets older than the
// topic's log start are gone (retention): green starts at the log start and the rollout says so, as
// a checkpoint reset does. Registration, starting offsets, green's run and the rollout row commit
// together, with the audit event.
import { z } from "zod";
import type { PrismaClient } from "@sluice/db";
import { firstLineageOffsets, presetStartingOffsets, registerPipelineVersionIn } from "@sluice/engine";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { recordAuditEvent, type TAuditWho } from "../audit/record-audit-event";
import { prismaSqlClient } from "../change-requests/prisma-sql-client";
import type { TTopicOffsets } from "../change-requests/topic-offsets";
import type { TBatchScheduler } from "../runs/run-pipeline-command";
import { RolloutError } from "./rollout-error";
import { setRun } from "./rollout-runs";

/** A week: a promotion can be rolled back for that long by default. */
export const DEFAULT_KEEP_PREVIOUS_HOURS = 168;

export const ZRolloutStart = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("earliest") }),
  z.object({
    kind: z.literal("timestamp"),
    at: z.coerce.date({ error: "at: give a date and time, e.g. 2026-12-01T10:00:00Z" }),
  }),
  z.object({ kind: z.literal("blue") }),
]);
export type TRolloutStart = z.infer<typeof ZRolloutStart>;

export const ZStartRolloutInput = z.object({
  from: ZRolloutStart.default({ kind: "earliest" }),
  reason: z.string().trim().min(1, "Give a reason: the people approving the promotion read it").max(2000),
  /** How long the side a promotion or rollback stops keeps its state and tables for a rollback. */
  keepPreviousHours: z.coerce
    .number()
    .int()
    .min(1, "keep the stopped side at least 1 hour")
    .max(8760, "keep the stopped side at most a year (8760 hours)")
    .default(DEFAULT_KEEP_PREVIOUS_HOURS),
});

export interface TStartedRollout {
  rolloutId: bigint;
  pipeline: string;
  blue: { pipelineVersionId: string; version: number };
  green: { pipelineVersionId: string; version: number };
  /** Green's first offset per partition. */
  offsets: Record<string, number>;
  keepPreviousHours: number;
  warnings: string[];
}

/** `spec` is validated by the caller (the CLI parses a file, the console a draft). */
export async function startRollout(
  db: PrismaClient,
  topics: TTopicOffsets,
  who: TAuditWho,
  spec: TPipelineSpec,
  input: z.input<typeof ZStartRolloutInput>,
  opts: { scheduler?: TBatchScheduler } = {},
): Promise<TStartedRollout> {
  const req = ZStartRolloutInput.parse(input);
  const pipeline = await db.pipeline.findUnique({
    where: { name: spec.name },
    select: { id: true, servingVersion: { select: { id: true, version: true } } },
  });
  const blue = pipeline?.servingVersion;
  if (!pipeline || !blue)
    throw new RolloutError(
      `no pipeline named "${spec.name}" with a serving version: register it first (a rollout changes a running pipeline)`,
      "not_found",
    );
  const target = { type: "pipeline", id: pipeline.id, label: spec.name };
  const { offsets, warnings } = await startingOffsets(db, topics, spec.source.kafka.topic, blue.id, req.from);
  const actor = who.actor;
  const started = await db.$transaction(
    async (tx) => {
      const running = await tx.rollout.findFirst({
        where: { pipelineId: pipeline.id, state: "running" },
        select: { id: true },
      });
      if (running)
        throw new RolloutError(
          `${spec.name} already has a rollout running (#${running.id}): promote, roll back or abort it first`,
          "conflict",
        );
      const registered = await registerPipelineVersionIn(prismaSqlClient(tx), spec, {
        continueFromPrevious: false,
        candidate: true,
        registeredBy: `rollout:${actor}`,
        reason: req.reason,
      });
      if (!registered.created)
        throw new RolloutError(
          `the spec is version ${registered.version}'s, already registered: a rollout needs a changed spec`,
          "invalid",
        );
      await presetStartingOffsets(prismaSqlClient(tx), registered.pipelineVersionId, offsets);
      const rollout = await tx.rollout.create({
        data: {
          pipelineId: pipeline.id,
          blueVersionId: blue.id,
          greenVersionId: registered.pipelineVersionId,
          startingFrom: JSON.parse(JSON.stringify({ ...req.from, offsets, warnings })),
          startedById: who.actorUserId,
          startedBy: actor,
          reason: req.reason,
          keepPreviousHours: req.keepPreviousHours,
        },
      });
      await setRun(
        tx,
        registered.pipelineVersionId,
        "running",
        "start",
        actor,
        `rollout #${rollout.id}: candidate beside version ${blue.version}`,
      );
      await recordAuditEvent(tx, {
        ...who,
        action: "rollout.start",
        target,
        reason: req.reason,
        after: {
          rollout: String(rollout.id),
          blue: blue.version,
          green: registered.version,
          from: req.from,
          keepPreviousHours: req.keepPreviousHours,
          offsets,
          warnings,
        },
      });
      return { rolloutId: rollout.id, green: registered };
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
  await opts.scheduler
    ?.scheduleTurn({ pipelineVersionId: started.green.pipelineVersionId, seq: 1, delayMs: 0 })
    .catch(() => undefined);
  return {
    rolloutId: started.rolloutId,
    pipeline: spec.name,
    blue: { pipelineVersionId: blue.id, version: blue.version },
    green: { pipelineVersionId: started.green.pipelineVersionId, version: started.green.version },
    offsets,
    keepPreviousHours: req.keepPreviousHours,
    warnings,
  };
}

/** Green's first offset per partition, within the topic's retained log, and what retention took. */
async function startingOffsets(
  db: PrismaClient,
  topics: TTopicOffsets,
  topic: string,
  blueVersionId: string,
  from: TRolloutStart,
): Promise<{ offsets: Record<string, number>; warnings: string[] }> {
  const bounds = await topics.bounds(topic);
  const warnings: string[] = [];
  let wanted: Record<number, number>;
  if (from.kind === "earliest") wanted = Object.fromEntries(bounds.map((b) => [b.partition, b.low]));
  else if (from.kind === "timestamp") wanted = await topics.forTimestamp(topic, from.at);
  else wanted = await blueStart(db, blueVersionId);
  const offsets: Record<string, number> = {};
  for (const b of bounds) {
    const asked = wanted[b.partition] ?? b.low;
    if (asked < b.low || (from.kind === "timestamp" && asked <= b.low && b.low > 0))
      warnings.push(
        `partition ${b.partition}: offsets before ${b.low} are gone (retention): green starts at ${b.low}${from.kind === "blue" ? `, not at blue's ${asked}` : ""}, so it cannot see what blue saw before`,
      );
    offsets[String(b.partition)] = Math.min(Math.max(asked, b.low), b.high);
  }
  return { offsets, warnings };
}

/** Where blue's lineage (blue and the versions it continued) read its first batch. */
async function blueStart(db: PrismaClient, blueVersionId: string): Promise<Record<number, number>> {
  const first = await firstLineageOffsets(prismaSqlClient(db), blueVersionId);
  if (!first)
    throw new RolloutError(
      "blue has not read a batch yet: there are no starting offsets of its own to start green from — start from earliest or a timestamp",
      "invalid",
    );
  return first;
}
