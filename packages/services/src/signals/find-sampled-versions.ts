// Which pipeline versions the workers' offset sampler measures: every version with run state other
// than stopped (running, paused, failed — their backlog is what on-call watches), with the topic it
// reads, the partitions it reads (all when the spec lists none) and its committed offsets.
import type { PrismaClient } from "@sluice/db";
import { z } from "zod";

export interface TSampledVersion {
  pipelineVersionId: string;
  topic: string;
  /** null: every partition of the topic. */
  partitions: number[] | null;
  /** The checkpoint's next offset to read, per partition. */
  committed: Record<string, number>;
}

const ZSourceFacts = z.object({
  source: z.object({
    kafka: z.object({ topic: z.string(), partitions: z.array(z.number().int()).optional() }),
  }),
});

export async function findSampledVersions(db: PrismaClient): Promise<TSampledVersion[]> {
  const runs = await db.pipelineRun.findMany({
    where: { status: { not: "stopped" } },
    select: {
      pipelineVersionId: true,
      pipelineVersion: {
        select: { spec: true, supersededById: true, checkpoint: { select: { endOffsets: true } } },
      },
    },
  });
  return runs.flatMap((r) => {
    const facts = ZSourceFacts.safeParse(r.pipelineVersion.spec);
    if (!facts.success || r.pipelineVersion.supersededById) return [];
    const ends = (r.pipelineVersion.checkpoint?.endOffsets ?? {}) as Record<string, unknown>;
    const committed = Object.fromEntries(
      Object.entries(ends).filter((e): e is [string, number] => typeof e[1] === "number"),
    );
    return [
      {
        pipelineVersionId: r.pipelineVersionId,
        topic: facts.data.source.kafka.topic,
        partitions: facts.data.source.kafka.partitions ?? null,
        committed,
      },
    ];
  });
}
