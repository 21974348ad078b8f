// Validation as you type: the same parseSpec the CLI and the engine use (every error at its line and
// column), plus what registering the draft would do — a new pipeline, the next version continuing the
// previous one's state, or a refusal with the reasons (a sink table another pipeline owns, or one no
// pipeline owns, is refused here as registration would) — and the contract's fields for the editor's
// completions inside expressions (read leniently, so they are there while the spec is still invalid).
import type pg from "pg";
import { parseDocument } from "yaml";
import {
  formatStateFindings,
  judgeDimensionPipeline,
  previewRegistration,
  sinkClaimRefusals,
} from "@sluice/engine";
import {
  nestingProblem,
  parseSpec,
  validateSpec,
  type TPipelineSpec,
  type TSpecError,
} from "@sluice/pipeline-spec";
import type { PrismaClient } from "@sluice/db";
import { needsApproval } from "./needs-approval";

export type TDraftRegistration =
  | { kind: "refused"; message: string }
  | { kind: "new-pipeline"; message: string }
  | { kind: "unchanged"; version: number; message: string }
  | {
      kind: "new-version";
      previous: number;
      continues: boolean;
      message: string;
      needsApproval: string[] | null;
    };

export type TDraftCheck =
  | { ok: false; errors: TSpecError[]; contractFields: TContractField[] }
  | {
      ok: true;
      name: string;
      owner: string;
      topic: string;
      contractFields: TContractField[];
      registration: TDraftRegistration;
    };

export interface TContractField {
  name: string;
  type: string;
}

export async function checkDraft(
  res: { db: PrismaClient; pool: pg.Pool },
  text: string,
): Promise<TDraftCheck> {
  const contractFields = lenientContractFields(text);
  const parsed = parseSpec(text);
  if (!parsed.ok) return { ok: false, errors: parsed.errors, contractFields };
  const { spec } = parsed;
  return {
    ok: true,
    name: spec.name,
    owner: spec.owner,
    topic: spec.source.kafka.topic,
    contractFields,
    registration: await draftRegistration(res, spec),
  };
}

async function draftRegistration(
  res: { db: PrismaClient; pool: pg.Pool },
  spec: TPipelineSpec,
): Promise<TDraftRegistration> {
  const dimension = await judgeDimensionPipeline(res.pool, spec);
  const refusals = [
    ...(await sinkClaimRefusals(res.pool, spec)),
    ...(dimension && "refusal" in dimension ? [dimension.refusal] : []),
  ];
  if (refusals.length > 0)
    return { kind: "refused", message: `Registering it would be refused: ${refusals.join("; ")}.` };
  const preview = await previewRegistration(res.pool, spec);
  if (preview.kind === "new-pipeline")
    return { kind: "new-pipeline", message: `Registers a new pipeline, ${spec.name}, as version 1.` };
  if (preview.kind === "registered")
    return {
      kind: "unchanged",
      version: preview.version,
      message: `The same spec as version ${preview.version}: registering it changes nothing.`,
    };
  const { compatibility, previous } = preview;
  const approval = needsApproval(await latestSpec(res.db, spec.name), spec);
  const reasons = approval.needed ? approval.reasons : null;
  const message = compatibility.compatible
    ? `Registers version ${previous + 1}, continuing version ${previous}'s checkpoint and state.${compatibility.notes.length > 0 ? `\n${formatStateFindings(compatibility.notes)}` : ""}`
    : `Version ${previous + 1} cannot continue version ${previous}'s state:\n${formatStateFindings(compatibility.problems)}\nRegister it with fresh state (an explicit choice), or revert the change.`;
  return {
    kind: "new-version",
    previous,
    continues: compatibility.compatible,
    message,
    needsApproval: reasons,
  };
}

/** The newest registered spec of a pipeline, if it still validates. */
export async function latestSpec(db: PrismaClient, name: string): Promise<TPipelineSpec | undefined> {
  const v = await db.pipelineVersion.findFirst({
    where: { pipeline: { name } },
    orderBy: { version: "desc" },
    select: { spec: true },
  });
  const checked = v ? validateSpec(v.spec) : undefined;
  return checked?.ok ? checked.spec : undefined;
}

/** contract.fields as written, even when the rest of the spec does not validate yet. */
export function lenientContractFields(text: string): TContractField[] {
  if (nestingProblem(text)) return [];
  try {
    const value = parseDocument(text, { uniqueKeys: false }).toJS({ maxAliasCount: 50 }) as {
      contract?: { fields?: Record<string, unknown> };
    } | null;
    const fields = value?.contract?.fields;
    if (!fields || typeof fields !== "object") return [];
    return Object.entries(fields).map(([name, t]) => ({
      name,
      type:
        typeof t === "string"
          ? t
          : typeof t === "object" && t && "type" in t
            ? String((t as { type: unknown }).type)
            : "?",
    }));
  } catch {
    return [];
  }
}
