// One pipeline for the console's pipeline page: who owns it, the version the page shows (`?v=N`, else
// the serving one, pipelines.serving_version_id), what that version reads and how its watermark treats quiet
// partitions, and that version's run state on the workers — so every action on the page acts on the
// version it shows. Batches and dead letters come from find-batch-progress.ts and summarize-dead-letters.ts.
import type { PrismaClient } from "@sluice/db";
import { DEFAULT_IDLE_TIMEOUT } from "@sluice/pipeline-spec";
import { z } from "zod";
import { getPipelineRun, type TPipelineRunView } from "../runs/get-pipeline-run";

export const ZPipelineByNameInput = z.object({
  pipeline: z.string().min(1).max(200),
  /** The version to show; without it, the serving one. */
  version: z.number().int().positive().optional(),
});
export type TPipelineByNameInput = z.input<typeof ZPipelineByNameInput>;

/** The run state without the failure's sample rows (bounded: `sluice status` shows them). */
export type TPipelineRunSummary = Omit<TPipelineRunView, "failureSample">;

export interface TPipelineDetail {
  name: string;
  description: string;
  ownerTeam: { slug: string; name: string };
  createdAt: Date;
  versionCount: number;
  /** The serving version's number (pipelines.serving_version_id); null when the pipeline has no version yet. */
  servingVersion: number | null;
  /** The version shown: the one asked for, else the serving one; null when there is no such version. */
  version: {
    id: string;
    version: number;
    createdAt: Date;
    serving: boolean;
    /** The version that took this one's place (it can never run again); null for a live version. */
    supersededBy: number | null;
    topic: string | null;
    /** source.kafka.parallelism: how many partition groups read the topic (1 without groups). */
    partitionGroups: number;
    /** The spec's event-time column, watermark delay and idle timeout; null without event time. */
    eventTime: { column: string; watermarkDelay: string | null; idleTimeout: string } | null;
  } | null;
  /** The shown version's run state; null when it was never started on the workers (no pipeline_runs row). */
  run: TPipelineRunSummary | null;
}

/** What the page reads from the stored spec; anything else in it is not needed here. */
const ZSpecFacts = z.object({
  source: z
    .object({ kafka: z.object({ topic: z.string(), parallelism: z.number().int().min(1).optional() }) })
    .optional()
    .catch(undefined),
  eventTime: z
    .object({ column: z.string(), watermarkDelay: z.string().optional(), idleTimeout: z.string().optional() })
    .optional()
    .catch(undefined),
});

/** How many lifecycle transitions the page lists (the CLI lists more). */
const TRANSITIONS_LISTED = 5;

/** null when there is no pipeline of that name. */
export async function getPipelineDetail(
  db: PrismaClient,
  input: TPipelineByNameInput,
): Promise<TPipelineDetail | null> {
  const { pipeline: name, version: asked } = ZPipelineByNameInput.parse(input);
  const p = await db.pipeline.findUnique({
    where: { name },
    select: {
      name: true,
      description: true,
      createdAt: true,
      ownerTeam: { select: { slug: true, name: true } },
      servingVersion: { select: { version: true } },
      _count: { select: { versions: true } },
    },
  });
  if (!p) return null;
  const servingVersion = p.servingVersion?.version ?? null;
  const wanted = asked ?? servingVersion;
  const latest =
    wanted === null
      ? null
      : await db.pipelineVersion.findFirst({
          where: { pipeline: { name }, version: wanted },
          select: { id: true, version: true, createdAt: true, spec: true, supersededById: true },
        });
  const supersededBy = latest?.supersededById
    ? await db.pipelineVersion.findUnique({ where: { id: latest.supersededById }, select: { version: true } })
    : null;
  const run = latest ? await getPipelineRun(db, latest.id, { transitions: TRANSITIONS_LISTED }) : null;
  const facts = latest ? ZSpecFacts.safeParse(latest.spec) : null;
  const spec = facts?.success ? facts.data : {};
  return {
    name: p.name,
    description: p.description,
    ownerTeam: p.ownerTeam,
    createdAt: p.createdAt,
    versionCount: p._count.versions,
    servingVersion,
    version: latest
      ? {
          id: latest.id,
          version: latest.version,
          createdAt: latest.createdAt,
          serving: latest.version === servingVersion,
          supersededBy: supersededBy?.version ?? null,
          topic: spec.source?.kafka.topic ?? null,
          partitionGroups: spec.source?.kafka.parallelism ?? 1,
          eventTime: spec.eventTime
            ? {
                column: spec.eventTime.column,
                watermarkDelay: spec.eventTime.watermarkDelay ?? null,
                idleTimeout: spec.eventTime.idleTimeout ?? DEFAULT_IDLE_TIMEOUT,
              }
            : null,
        }
      : null,
    run: run ? withoutSample(run) : null,
  };
}

function withoutSample({ failureSample: _sample, ...run }: TPipelineRunView): TPipelineRunSummary {
  return run;
}
