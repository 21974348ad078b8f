// A running pipeline whose producer starts sending something its contract does not expect — unknown
// fields it rescues into _rescued, or values of another type it quarantines — raises a schema change
// request by itself, so the source's owners see what they caused and an operator decides. The
// workers call this after a batch committed with drift (the engine collects it while deciding the
// rows: @sluice/engine batch/schema-drift.ts, nothing for a batch without drift).
//
// One system request per pipeline version and drift: fields already on a pending system request of
// this version update its counts, last seen and samples instead of raising another; fields a rejected
// request of this pipeline already showed (someone decided), or that a pending request's proposal
// already declares, raise nothing. The remaining fields raise ONE new request proposing the current
// spec plus each new field as optional with its inferred type, and for a type mismatch the safe
// widening (int → decimal) when there is one — otherwise the proposal is left for a person to edit
// (`needsEdit` says why) and approving it is refused until then.
//
// Serialised per version by an advisory lock (batches of a version are sequential anyway; this
// keeps two workers finishing overlapping turns from raising two requests). Never throws into the
// batch: the worker logs a failure and continues (the next batch with the same drift raises it).
import { validateSpec, type TFieldType, type TPipelineSpec } from "@sluice/pipeline-spec";
import type { DriftField, SchemaDrift } from "@sluice/engine";
import type { PrismaClient } from "@sluice/db";
import { recordAuditEvent } from "../audit/record-audit-event";
import type { TObservedField } from "./request-schema-change";
import { schemaChangeImpact } from "./request-schema-change";

export const SYSTEM_REQUESTER = "system";
const MAX_SAMPLES = 5;

/** `raised`: the requests raised (one per decision, see groupForApproval), `id` the first of them. */
export type TObserveResult =
  | { kind: "none" }
  | { kind: "raised"; id: string; raised: string[]; fields: string[] }
  | { kind: "updated"; ids: string[]; fields: string[] }
  | { kind: "raised+updated"; id: string; raised: string[]; ids: string[]; fields: string[] };

interface TStoredObserved extends Omit<TObservedField, "firstSeen" | "lastSeen"> {
  firstSeen: string;
  lastSeen: string;
  declaredType?: string;
  /** Rows per type the values would be declared as: the set a person reads, with counts. */
  types?: Record<string, number>;
}

const keyOf = (f: { outcome: string; field: string }) => `${f.outcome}:${f.field}`;

/** The type a quarantined value's field may safely widen to, so both the old and the new values fit. */
export function safeWidening(declared: TFieldType | undefined, observed: TFieldType): TFieldType | undefined {
  if (declared === undefined) return observed; // an unknown field quarantined by onUnknownField: quarantine
  if (declared === "int" && (observed === "double" || observed === "decimal")) return "decimal";
  if (declared === "double" && observed === "decimal") return "decimal";
  return undefined;
}

/** The current spec with the drifted fields declared; `needsEdit` when some cannot be proposed safely. */
export function proposeFromDrift(
  current: TPipelineSpec,
  fields: DriftField[],
): { proposed: TPipelineSpec; needsEdit: string | null } {
  const contractFields = {
    ...(current.contract.fields as Record<string, { type: TFieldType; optional: boolean }>),
  };
  const unsafe: string[] = [];
  for (const f of fields) {
    if (f.outcome === "rescued" || f.declaredType === undefined) {
      contractFields[f.field] = { type: f.inferredType, optional: true };
      continue;
    }
    const widened = safeWidening(f.declaredType, f.inferredType);
    if (widened) contractFields[f.field] = { ...contractFields[f.field]!, type: widened };
    else
      unsafe.push(
        `${f.field} is declared ${f.declaredType} but arrives as ${f.inferredType}: no type holds both without changing what stored values mean`,
      );
  }
  const proposed = { ...current, contract: { ...current.contract, fields: contractFields } } as TPipelineSpec;
  const checked = validateSpec(JSON.parse(JSON.stringify(proposed)));
  if (!checked.ok)
    return {
      proposed: current,
      needsEdit: `the fields cannot be declared as they arrive (${checked.errors.map((e) => `${e.path}: ${e.message}`).join("; ")}): declare them as you want them in a new version of the spec (the pipeline's Edit page), then reject this request with a note`,
    };
  return {
    proposed: checked.spec,
    needsEdit:
      unsafe.length > 0
        ? `${unsafe.join("; ")}. There is nothing to approve: fix the producer, or declare the field as you want it in a new version of the spec (the pipeline's Edit page), then reject this request with a note.`
        : null,
  };
}

export async function observeSchemaDrift(
  db: PrismaClient,
  input: { pipelineVersionId: string; batchId: number; drift: SchemaDrift },
): Promise<TObserveResult> {
  if (input.drift.length === 0) return { kind: "none" };
  return db.$transaction(async (tx) => {
    // Raw: a lock names no table or column to type, and a builder's bare `select pg_advisory_xact_lock(…)` is a void column Prisma cannot read.
    await tx.$executeRaw`SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtext(${`sluice.drift.${input.pipelineVersionId}`}))) l`;
    const version = await tx.pipelineVersion.findUnique({
      where: { id: input.pipelineVersionId },
      select: {
        id: true,
        version: true,
        spec: true,
        pipelineId: true,
        supersededById: true,
        pipeline: { select: { name: true } },
      },
    });
    if (!version || version.supersededById) return { kind: "none" as const };
    const current = validateSpec(version.spec);
    if (!current.ok) return { kind: "none" as const };
    // A rejected request explains its fields on later versions too (someone decided it is not a
    // schema change: e.g. a producer's corrupt values); open ones only on their own version.
    const requests = await tx.changeRequest.findMany({
      where: {
        kind: "schema_change",
        pipelineId: version.pipelineId,
        OR: [
          { pipelineVersionId: version.id, status: { in: ["pending", "approved"] } },
          { status: "rejected" },
        ],
      },
      select: { id: true, status: true, requestedById: true, payload: true },
      orderBy: { id: "asc" },
    });
    const onSystemPending = new Map<
      string,
      { id: bigint; payload: { observed?: TStoredObserved[] } & Record<string, unknown> }
    >();
    const explained = new Set<string>();
    for (const r of requests) {
      const payload = r.payload as {
        observed?: TStoredObserved[] | null;
        proposed?: { contract?: { fields?: Record<string, unknown> } };
      };
      for (const o of payload.observed ?? []) {
        explained.add(keyOf(o));
        if (r.status === "pending" && r.requestedById === null)
          onSystemPending.set(keyOf(o), { id: r.id, payload: payload as never });
      }
      // A person's pending proposal that declares an unknown field explains its rescue.
      if (r.status === "pending")
        for (const name of Object.keys(payload.proposed?.contract?.fields ?? {}))
          if (!(name in current.spec.contract.fields)) explained.add(`rescued:${name}`);
    }

    const updated = new Map<bigint, { payload: Record<string, unknown> & { observed: TStoredObserved[] } }>();
    const fresh: DriftField[] = [];
    for (const f of input.drift) {
      const pending = onSystemPending.get(keyOf(f));
      if (pending) {
        const entry = updated.get(pending.id) ?? {
          payload: { ...pending.payload, observed: [...(pending.payload.observed ?? [])] },
        };
        entry.payload.observed = entry.payload.observed.map((o) => (keyOf(o) === keyOf(f) ? merge(o, f) : o));
        updated.set(pending.id, entry);
      } else if (!explained.has(keyOf(f))) fresh.push(f);
    }
    // Fields that cannot be declared as they arrive join this version's pending request of such fields
    // when there is one: it is one decision (fix the producer, or reject), not one request per field.
    const groups = groupForApproval(current.spec, fresh);
    const unsafeGroup = groups.find((g) => proposeFromDrift(current.spec, g).needsEdit !== null);
    const undeclarable =
      unsafeGroup &&
      requests.find(
        (r) =>
          r.status === "pending" &&
          r.requestedById === null &&
          (r.payload as { needsEdit?: string | null }).needsEdit,
      );
    if (unsafeGroup && undeclarable) {
      const entry = updated.get(undeclarable.id) ?? {
        payload: {
          ...(undeclarable.payload as Record<string, unknown>),
          observed: [...((undeclarable.payload as { observed?: TStoredObserved[] }).observed ?? [])],
        },
      };
      entry.payload.observed.push(...unsafeGroup.map((f) => stored(f)));
      // proposeFromDrift reads only field, outcome, declaredType and inferredType, which stored rows keep.
      entry.payload.needsEdit = proposeFromDrift(
        current.spec,
        entry.payload.observed as unknown as DriftField[],
      ).needsEdit;
      updated.set(undeclarable.id, entry);
      groups.splice(groups.indexOf(unsafeGroup), 1);
    }
    for (const [id, { payload }] of updated) {
      await tx.changeRequest.update({
        where: { id },
        data: { payload: JSON.parse(JSON.stringify(payload)), updatedAt: new Date() },
      });
    }

    const target = { type: "pipeline", id: version.pipelineId, label: version.pipeline.name };
    const raised: bigint[] = [];
    // One request per decision: the fields with a safe proposal together, and those without one
    // together — so a producer's corrupt values (a person must decide those) never block a new field
    // that could simply be declared.
    for (const group of groups) {
      const { proposed, needsEdit } = proposeFromDrift(current.spec, group);
      const observed: TStoredObserved[] = group.map((f) => stored(f));
      const rescued = group.filter((f) => f.outcome === "rescued").map((f) => f.field);
      const quarantined = group.filter((f) => f.outcome === "quarantined").map((f) => f.field);
      const reason = [
        `Raised by the engine: batch ${input.batchId} of version ${version.version}`,
        rescued.length > 0 ? ` rescued unknown field(s) ${rescued.join(", ")} into _rescued` : "",
        rescued.length > 0 && quarantined.length > 0 ? " and" : "",
        quarantined.length > 0
          ? ` quarantined rows for field(s) ${quarantined.join(", ")} (not what the contract declares)`
          : "",
        ". The producer sends something the contract does not declare: see the observed fields and samples.",
      ].join("");
      const cr = await tx.changeRequest.create({
        data: {
          kind: "schema_change",
          pipelineId: version.pipelineId,
          pipelineVersionId: version.id,
          requestedById: null,
          requestedBy: SYSTEM_REQUESTER,
          reason,
          payload: JSON.parse(JSON.stringify({ proposed, observed, needsEdit, source: "engine" })),
          impact: JSON.parse(JSON.stringify(schemaChangeImpact(current.spec, proposed))),
        },
      });
      raised.push(cr.id);
      await recordAuditEvent(tx, {
        actorUserId: null,
        actor: SYSTEM_REQUESTER,
        action: "change.request",
        target,
        reason,
        after: {
          changeRequest: String(cr.id),
          kind: "schema_change",
          fields: group.map((f) => ({
            field: f.field,
            outcome: f.outcome,
            inferredType: f.inferredType,
            count: f.count,
          })),
          needsEdit,
        },
        from: { origin: "system" },
      });
    }
    const fields = input.drift.map((f) => f.field);
    const ids = [...updated.keys()].map(String);
    const raisedIds = raised.map(String);
    if (raisedIds.length > 0 && ids.length > 0)
      return { kind: "raised+updated" as const, id: raisedIds[0]!, raised: raisedIds, ids, fields };
    if (raisedIds.length > 0)
      return {
        kind: "raised" as const,
        id: raisedIds[0]!,
        raised: raisedIds,
        fields: fresh.map((f) => f.field),
      };
    if (ids.length > 0) return { kind: "updated" as const, ids, fields };
    return { kind: "none" as const };
  });
}

/** The fields that can be declared as they arrive, together; those that cannot, together. */
export function groupForApproval(current: TPipelineSpec, fresh: DriftField[]): DriftField[][] {
  const safe = fresh.filter((f) => proposeFromDrift(current, [f]).needsEdit === null);
  const unsafe = fresh.filter((f) => !safe.includes(f));
  return [safe, unsafe].filter((g) => g.length > 0);
}

function stored(f: DriftField): TStoredObserved {
  return {
    field: f.field,
    inferredType: f.inferredType,
    outcome: f.outcome,
    count: f.count,
    firstSeen: new Date(f.firstSeenMs).toISOString(),
    lastSeen: new Date(f.lastSeenMs).toISOString(),
    samples: f.samples.slice(0, MAX_SAMPLES),
    types: { ...f.types },
    ...(f.declaredType ? { declaredType: f.declaredType } : {}),
  };
}

/** Two type counts added up ({ json: 20 } + { json: 2, boolean: 1 } → { json: 22, boolean: 1 }). */
export function addTypeCounts(
  a: Record<string, number> | undefined,
  b: Record<string, number | undefined>,
): Record<string, number> {
  const sum: Record<string, number> = { ...a };
  for (const [t, n] of Object.entries(b)) sum[t] = (sum[t] ?? 0) + (n ?? 0);
  return sum;
}

function merge(o: TStoredObserved, f: DriftField): TStoredObserved {
  const first = Math.min(Date.parse(o.firstSeen), f.firstSeenMs);
  const last = Math.max(Date.parse(o.lastSeen), f.lastSeenMs);
  return {
    ...o,
    count: o.count + f.count,
    firstSeen: new Date(first).toISOString(),
    lastSeen: new Date(last).toISOString(),
    // The proposal stays what was raised (an approver may be reading it): the types seen later are
    // counted beside it, a set with counts rather than a sentence that grows with every batch.
    types: addTypeCounts(o.types ?? { [o.inferredType]: o.count }, f.types),
    samples: o.samples.length >= MAX_SAMPLES ? o.samples : [...o.samples, ...f.samples].slice(0, MAX_SAMPLES),
  };
}
