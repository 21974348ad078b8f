// Registering a draft from the console: the same registration the CLI does (@sluice/engine
// registerPipelineVersion — state compatibility, refusals with reasons, fresh state only when asked
// for), after the approval rule (needs-approval.ts), recording who registered it and why with the
// version and as an audit event. The caller has already decided the actor may (pipeline.register).
import type pg from "pg";
import {
  IncompatibleStateError,
  registerPipelineVersion,
  SinkClaimError,
  DimensionPipelineError,
  type RegisteredVersion,
} from "@sluice/engine";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import type { PrismaClient } from "@sluice/db";
import { recordAuditEvent, type TAuditOrigin } from "../audit/record-audit-event";
import type { TActor } from "../auth/actor";
import { latestSpec } from "./check-draft";
import { approvalRefusal, needsApproval } from "./needs-approval";

export type TSubmitDraftResult =
  | {
      ok: true;
      name: string;
      version: number;
      continuedFrom: number | null;
      replaced: number | null;
      fresh: boolean;
      notes: string[];
    }
  | {
      ok: false;
      code: "NEEDS_APPROVAL" | "INCOMPATIBLE" | "SINK_TAKEN" | "DIMENSION_REFUSED" | "UNCHANGED";
      message: string;
    };

export async function submitPipelineDraft(
  res: { db: PrismaClient; pool: pg.Pool },
  input: { spec: TPipelineSpec; reason: string; freshState: boolean; actor: TActor; from: TAuditOrigin },
): Promise<TSubmitDraftResult> {
  const { spec, actor } = input;
  const approval = needsApproval(await latestSpec(res.db, spec.name), spec);
  if (approval.needed) return refused(res.db, input, "NEEDS_APPROVAL", approvalRefusal(spec.name, approval));
  let reg: RegisteredVersion;
  try {
    reg = await registerPipelineVersion(res.pool, spec, {
      continueFromPrevious: !input.freshState,
      registeredBy: `user:${actor.email}`,
      reason: input.reason,
    });
  } catch (err) {
    // Another pipeline's table, or an existing table no pipeline owns: refused with the owner's name.
    if (err instanceof SinkClaimError) return refused(res.db, input, "SINK_TAKEN", err.message);
    // A join on another pipeline it may not or cannot use (unknown, another team's, not SCD2 history).
    if (err instanceof DimensionPipelineError)
      return refused(res.db, input, "DIMENSION_REFUSED", err.message);
    if (!(err instanceof IncompatibleStateError)) throw err;
    // The engine's words name the CLI flag; in the console the same choice is the fresh-state box.
    return refused(
      res.db,
      input,
      "INCOMPATIBLE",
      `${err.message}\nIn the console: tick "Register with fresh state" to choose that.`,
    );
  }
  if (!reg.created)
    return {
      ok: false,
      code: "UNCHANGED",
      message: `${spec.name}: version ${reg.version} already has exactly this spec, so nothing was registered.`,
    };
  const result = {
    ok: true as const,
    name: spec.name,
    version: reg.version,
    continuedFrom: reg.continuedFrom?.version ?? null,
    replaced: reg.replaced?.version ?? null,
    fresh: input.freshState,
    notes: (reg.notes ?? []).map((n) => n.reason),
  };
  await recordAuditEvent(res.db, {
    actorUserId: actor.id,
    actor: actor.email,
    action: "pipeline.register",
    target: { type: "pipeline", id: reg.pipelineId, label: `${spec.name} version ${reg.version}` },
    reason: input.reason,
    after: {
      version: reg.version,
      continuedFrom: result.continuedFrom,
      replaced: result.replaced,
      freshState: input.freshState,
      owner: spec.owner,
    },
    from: input.from,
  });
  return result;
}

async function refused(
  db: PrismaClient,
  input: { spec: TPipelineSpec; reason: string; actor: TActor; from: TAuditOrigin },
  code: "NEEDS_APPROVAL" | "INCOMPATIBLE" | "SINK_TAKEN" | "DIMENSION_REFUSED",
  message: string,
): Promise<TSubmitDraftResult> {
  await recordAuditEvent(db, {
    actorUserId: input.actor.id,
    actor: input.actor.email,
    action: "pipeline.register",
    outcome: "refused",
    target: { type: "pipeline", label: input.spec.name },
    reason: `${input.reason} — refused: ${message.split("\n")[0]}`.slice(0, 2000),
    from: input.from,
  });
  return { ok: false, code, message };
}
