// Values no declarable type holds — a producer's corrupt `amount: {…}` where the contract declares a
// decimal — are not a schema change anyone can approve: they are a producer fault, for whoever owns
// the source. The workers still record what they quarantined on a system request per version
// (observe-schema-drift.ts: `needsEdit` says why it proposes nothing), so its counts, samples and
// history are kept; here those requests are read as faults instead: grouped by topic, field and
// declared type across every pipeline and version that reads the topic (one producer fault, however
// many pipelines it hits), for the Change requests page's "Producer faults" panel, and per pipeline
// for the `producer_fault` alert rule (the owner team is paged with samples and the quarantine count).
import { rowsOf, sql, tables, type PrismaClient } from "@sluice/db";

interface TStoredObserved {
  field: string;
  outcome: "rescued" | "quarantined";
  inferredType: string;
  declaredType?: string;
  types?: Record<string, number>;
  count: number;
  firstSeen: string;
  lastSeen: string;
  samples: Record<string, unknown>[];
}

/** One undeclarable field as one request of one pipeline version recorded it. */
export interface TFaultObservation {
  requestId: string;
  pipelineId: string;
  pipeline: string;
  version: number;
  topic: string | null;
  field: string;
  declaredType: string | null;
  /** Rows per type the values arrived as. */
  types: Record<string, number>;
  rows: number;
  firstSeen: Date;
  lastSeen: Date;
  samples: Record<string, unknown>[];
}

/** One producer fault: a field of a topic whose values no type holds, across pipelines and versions. */
export interface TProducerFault {
  topic: string | null;
  field: string;
  declaredType: string | null;
  types: Record<string, number>;
  /** Rows quarantined for it, over every pipeline and version (each pipeline quarantines its own copy). */
  rows: number;
  firstSeen: Date;
  lastSeen: Date;
  samples: Record<string, unknown>[];
  /** Where it was seen: each pipeline version and the request that records it. */
  seenBy: { pipeline: string; version: number; requestId: string; rows: number }[];
}

/** The ids of pending requests that record a producer fault (they are not shown in the request queue). */
export async function findProducerFaultRequestIds(db: PrismaClient): Promise<bigint[]> {
  const rows = await rowsOf(
    db,
    tables
      .selectFrom("change_requests")
      .select("id")
      .where("kind", "=", "schema_change")
      .where("status", "=", "pending")
      .where("requested_by_id", "is", null)
      .where((eb) => sql<boolean>`coalesce(${eb.ref("payload")}->>'needsEdit', '') <> ''`),
  );
  return rows.map((r) => r.id);
}

/** Every undeclarable field recorded on a pending system request, per pipeline version. */
export async function findFaultObservations(
  db: PrismaClient,
  pipelineIds?: string[],
): Promise<TFaultObservation[]> {
  const ids = await findProducerFaultRequestIds(db);
  if (ids.length === 0) return [];
  const requests = await db.changeRequest.findMany({
    where: { id: { in: ids }, ...(pipelineIds ? { pipelineId: { in: pipelineIds } } : {}) },
    select: { id: true, pipelineId: true, pipelineVersionId: true, payload: true },
  });
  const versions = await db.pipelineVersion.findMany({
    where: { id: { in: [...new Set(requests.map((r) => r.pipelineVersionId))] } },
    select: { id: true, version: true, spec: true, pipeline: { select: { name: true } } },
  });
  const byId = new Map(versions.map((v) => [v.id, v]));
  return requests.flatMap((r) => {
    const v = byId.get(r.pipelineVersionId);
    const payload = r.payload as { observed?: TStoredObserved[] | null };
    const spec = v?.spec as { source?: { kafka?: { topic?: string } } } | undefined;
    return (
      (payload.observed ?? [])
        // The fields this request could not declare: declared ones whose values no widening holds
        // (observe-schema-drift.ts puts only those on a request that needs an edit).
        .filter((o) => o.outcome === "quarantined" && o.declaredType !== undefined)
        .map((o): TFaultObservation => ({
          requestId: String(r.id),
          pipelineId: r.pipelineId,
          pipeline: v?.pipeline.name ?? "?",
          version: v?.version ?? 0,
          topic: spec?.source?.kafka?.topic ?? null,
          field: o.field,
          declaredType: o.declaredType ?? null,
          types: o.types ?? typesFromLegacy(o.inferredType, o.count),
          rows: o.count,
          firstSeen: new Date(o.firstSeen),
          lastSeen: new Date(o.lastSeen),
          samples: o.samples ?? [],
        }))
    );
  });
}

/** Requests raised before types were counted: "json (later also boolean)…" → each type, counts unknown (all rows on the first). */
function typesFromLegacy(inferred: string, rows: number): Record<string, number> {
  const [first, ...later] = [...new Set(inferred.split(/\)? \(later also |\)$/).filter(Boolean))];
  return Object.fromEntries([[first ?? "json", rows], ...later.map((t) => [t, 0])]);
}

/** Producer faults grouped by topic, field and declared type across pipelines and versions, newest first. */
export async function findProducerFaults(db: PrismaClient): Promise<TProducerFault[]> {
  const groups = new Map<string, TProducerFault>();
  for (const o of await findFaultObservations(db)) {
    const key = JSON.stringify([o.topic, o.field, o.declaredType]);
    const g = groups.get(key) ?? {
      topic: o.topic,
      field: o.field,
      declaredType: o.declaredType,
      types: {},
      rows: 0,
      firstSeen: o.firstSeen,
      lastSeen: o.lastSeen,
      samples: [],
      seenBy: [],
    };
    for (const [t, n] of Object.entries(o.types)) g.types[t] = (g.types[t] ?? 0) + n;
    g.rows += o.rows;
    if (o.firstSeen < g.firstSeen) g.firstSeen = o.firstSeen;
    if (o.lastSeen > g.lastSeen) g.lastSeen = o.lastSeen;
    g.samples = [...g.samples, ...o.samples].slice(0, 3);
    g.seenBy.push({ pipeline: o.pipeline, version: o.version, requestId: o.requestId, rows: o.rows });
    groups.set(key, g);
  }
  return [...groups.values()].sort((a, b) => b.lastSeen.getTime() - a.lastSeen.getTime());
}
