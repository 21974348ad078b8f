// Every version of a pipeline with who registered it, when and why, which state it started from, and
// its spec as YAML — and the changes between any two (@sluice/pipeline-spec diffSpecs) with whether the later
// one could continue the earlier one's state (stateCompatibility).
import { stringify } from "yaml";
import type { PrismaClient } from "@sluice/db";
import { diffSpecs, stateCompatibility, validateSpec, type TSpecChange } from "@sluice/pipeline-spec";

export interface TVersionHistoryEntry {
  version: number;
  createdAt: Date;
  /** "user:<email>", "cli:<email>" — null for versions registered before this was recorded. */
  registeredBy: string | null;
  reason: string;
  /** How its state began, in words: continued from version N, fresh, or first version. */
  state: string;
  supersededBy: number | null;
  specYaml: string;
}

export async function findVersionHistory(
  db: PrismaClient,
  name: string,
): Promise<TVersionHistoryEntry[] | null> {
  const p = await db.pipeline.findUnique({
    where: { name },
    select: {
      versions: {
        orderBy: { version: "desc" },
        select: {
          id: true,
          version: true,
          createdAt: true,
          registeredBy: true,
          reason: true,
          continuedFromId: true,
          supersededById: true,
          spec: true,
        },
      },
    },
  });
  if (!p) return null;
  const numberOf = new Map(p.versions.map((v) => [v.id, v.version]));
  return p.versions.map((v) => ({
    version: v.version,
    createdAt: v.createdAt,
    registeredBy: v.registeredBy,
    reason: v.reason,
    state: stateOrigin(
      v.version,
      v.continuedFromId ? numberOf.get(v.continuedFromId) : undefined,
      v.registeredBy,
    ),
    supersededBy: v.supersededById ? (numberOf.get(v.supersededById) ?? null) : null,
    specYaml: stringify(v.spec, { lineWidth: 0 }),
  }));
}

function stateOrigin(
  version: number,
  continuedFrom: number | undefined,
  registeredBy: string | null,
): string {
  if (continuedFrom !== undefined) return `continued version ${continuedFrom}'s checkpoint and state`;
  if (version === 1) return "first version: state from source.kafka.startingOffsets";
  // Before registered_by was kept, neither was whether a version continued its predecessor.
  return registeredBy === null
    ? "not recorded (registered before Sluice kept it)"
    : "fresh state, from source.kafka.startingOffsets";
}

export interface TVersionDiff {
  from: number;
  to: number;
  changes: TSpecChange[];
  /** Whether `to` could continue `from`'s state, and why not. */
  stateCompatible: boolean;
  stateFindings: string[];
}

export async function diffVersions(
  db: PrismaClient,
  name: string,
  from: number,
  to: number,
): Promise<TVersionDiff | null> {
  const versions = await db.pipelineVersion.findMany({
    where: { pipeline: { name }, version: { in: [from, to] } },
    select: { version: true, spec: true },
  });
  const a = versions.find((v) => v.version === from);
  const b = versions.find((v) => v.version === to);
  if (!a || !b) return null;
  const [sa, sb] = [validateSpec(a.spec), validateSpec(b.spec)];
  if (!sa.ok || !sb.ok)
    return {
      from,
      to,
      changes: [],
      stateCompatible: false,
      stateFindings: ["a stored spec no longer validates, so the two cannot be compared"],
    };
  const compatibility = stateCompatibility(sa.spec, sb.spec);
  return {
    from,
    to,
    changes: diffSpecs(sa.spec, sb.spec),
    stateCompatible: compatibility.compatible,
    stateFindings: [...compatibility.problems, ...compatibility.notes].map((f) => `${f.state}: ${f.reason}`),
  };
}
