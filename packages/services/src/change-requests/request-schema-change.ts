// Asking for a schema change: a new contract (or a whole new spec version) proposed by a pipeline's
// owner — from the console's authoring (issue 14 refuses breaking contract changes with "needs a change
// request" and calls this) — or raised by the system when a running pipeline starts rescuing unknown
// fields or quarantining type mismatches (`observed`: field names, inferred types, counts, first and
// last seen, sample rows). The request carries what an approver needs to decide: the contract diff
// classified compatible or breaking (classifyContractChange), whether the new version can continue the
// state (stateCompatibility), and which downstream parts use a changed or removed field.
// Approving one applies it at a batch boundary (apply-schema-change.ts); the requester never approves
// their own. The engine's requests are raised by observe-schema-drift.ts.
import { z } from "zod";
import {
  classifyContractChange,
  parseSpec,
  stateCompatibility,
  validateSpec,
  type TContractClassification,
  type TPipelineSpec,
  type TStateCompatibility,
} from "@sluice/pipeline-spec";
import type { PrismaClient } from "@sluice/db";
import { recordAuditEvent, type TAuditWho } from "../audit/record-audit-event";
import { findPipelineVersion } from "../pipelines/find-pipeline-version";
import { ChangeRequestError, getChangeRequest, type TChangeRequestView } from "./change-request-view";

export interface TObservedField {
  field: string;
  inferredType: string;
  /** "rescued" (unknown field kept in _rescued) or "quarantined" (type mismatch). */
  outcome: "rescued" | "quarantined";
  count: number;
  firstSeen: Date;
  lastSeen: Date;
  samples: unknown[];
}

export interface TSchemaChangeImpact {
  contract: TContractClassification;
  state: TStateCompatibility;
  /** Where the running version uses a changed or removed field: "expectations.known_type", "aggregate.measures.settled", … */
  downstream: { field: string; uses: string[] }[];
}

/** From the console: the proposed spec as YAML (or JSON) text — a draft, or an edited registered spec. */
export const ZRequestSchemaChangeInput = z.object({
  pipeline: z.string().min(1, "Name the pipeline").max(200),
  specText: z.string().min(1, "Paste the proposed spec").max(200_000),
  reason: z.string().trim().min(1, "Give a reason: the approver reads it").max(2000),
});

export async function requestSchemaChangeFromText(
  db: PrismaClient,
  who: TAuditWho,
  input: z.input<typeof ZRequestSchemaChangeInput>,
): Promise<TChangeRequestView> {
  const req = ZRequestSchemaChangeInput.parse(input);
  const parsed = parseSpec(req.specText);
  if (!parsed.ok) {
    const message = `the proposed spec is invalid: ${parsed.errors.map((e) => `${e.line ? `line ${e.line}: ` : ""}${e.path ? `${e.path}: ` : ""}${e.message}`).join("; ")}`;
    await recordAuditEvent(db, {
      ...who,
      action: "change.request",
      outcome: "refused",
      target: { type: "pipeline", label: req.pipeline },
      reason: req.reason,
      after: { kind: "schema_change", refused: message.slice(0, 1000) },
    });
    throw new ChangeRequestError(message, "invalid");
  }
  return requestSchemaChange(db, who, { pipeline: req.pipeline, proposed: parsed.spec, reason: req.reason });
}

export async function requestSchemaChange(
  db: PrismaClient,
  who: TAuditWho,
  input: { pipeline: string; proposed: unknown; reason: string; observed?: TObservedField[] },
): Promise<TChangeRequestView> {
  if (!input.reason.trim())
    throw new ChangeRequestError("reason: say why the schema changes: the approver reads it", "invalid");
  const found = await findPipelineVersion(db, input.pipeline);
  if (!found?.version)
    throw new ChangeRequestError(
      `No pipeline named "${input.pipeline}" with a registered version.`,
      "not_found",
    );
  const current = validateSpec(found.version.spec);
  if (!current.ok)
    throw new ChangeRequestError(
      `the registered spec of "${input.pipeline}" no longer validates: ${current.errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`,
      "conflict",
    );
  const proposed = validateSpec(input.proposed);
  if (!proposed.ok)
    throw new ChangeRequestError(
      `the proposed spec is invalid: ${proposed.errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`,
      "invalid",
    );
  if (proposed.spec.name !== current.spec.name)
    throw new ChangeRequestError(
      `name: the proposed spec is for "${proposed.spec.name}", not "${input.pipeline}"`,
      "invalid",
    );
  const impact = schemaChangeImpact(current.spec, proposed.spec);
  const target = { type: "pipeline", id: found.pipelineId, label: found.pipeline };
  const created = await db.$transaction(async (tx) => {
    const cr = await tx.changeRequest.create({
      data: {
        kind: "schema_change",
        pipelineId: found.pipelineId,
        pipelineVersionId: found.version!.id,
        requestedById: who.actorUserId,
        requestedBy: who.actor,
        reason: input.reason.trim(),
        payload: JSON.parse(JSON.stringify({ proposed: proposed.spec, observed: input.observed ?? null })),
        impact: JSON.parse(JSON.stringify(impact)),
      },
    });
    await recordAuditEvent(tx, {
      ...who,
      action: "change.request",
      target,
      reason: input.reason,
      after: {
        changeRequest: String(cr.id),
        kind: "schema_change",
        compatibility: impact.contract.compatibility,
        continuesState: impact.state.compatible,
      },
    });
    return cr;
  });
  return (await getChangeRequest(db, created.id))!;
}

export function schemaChangeImpact(before: TPipelineSpec, after: TPipelineSpec): TSchemaChangeImpact {
  const contract = classifyContractChange(before.contract, after.contract);
  const touched = [
    ...new Set(contract.changes.filter((c) => c.field && c.kind !== "field-added").map((c) => c.field!)),
  ];
  return {
    contract,
    state: stateCompatibility(before, after),
    downstream: touched
      .map((field) => ({ field, uses: usesOf(before, field) }))
      .filter((d) => d.uses.length > 0),
  };
}

/** Where a field's name appears as a word in the spec's expressions and column lists. */
function usesOf(spec: TPipelineSpec, field: string): string[] {
  const word = new RegExp(`\\b${field.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`);
  const uses: string[] = [];
  const s = spec as unknown as Record<string, unknown> & {
    expectations?: { name: string; expr: string }[];
    transform?: { filter?: string; select?: string[] };
    aggregate?: { groupBy?: string[]; measures?: Record<string, string> };
    dedupe?: { key?: string[] };
    eventTime?: { column?: string };
    cdc?: { key?: string[]; sequenceBy?: string };
  };
  for (const e of s.expectations ?? []) if (word.test(e.expr)) uses.push(`expectations.${e.name}`);
  if (s.transform?.filter && word.test(s.transform.filter)) uses.push("transform.filter");
  if (s.transform?.select?.includes(field)) uses.push("transform.select (a sink column)");
  for (const [m, expr] of Object.entries(s.aggregate?.measures ?? {}))
    if (word.test(expr)) uses.push(`aggregate.measures.${m}`);
  if (s.aggregate?.groupBy?.includes(field)) uses.push("aggregate.groupBy");
  if (s.dedupe?.key?.includes(field)) uses.push("dedupe.key");
  if (s.eventTime?.column === field) uses.push("eventTime.column");
  if (s.cdc?.key?.includes(field) || s.cdc?.sequenceBy === field) uses.push("cdc");
  if (!s.transform?.select && !s.aggregate) uses.push("the sink table's column");
  return uses;
}
