// Who is acting: the CLI acts as a named Sluice user — `--as <email>` or SLUICE_ACTOR — checked
// against the database's users, and every command that changes something asks the same
// authorization decision as the console (@sluice/services authorizeAction) before it does anything.
// Recorded as "cli:<email>" (pipeline_run_transitions, webhook_requeues) and in the audit log (origin "cli").
//
// This is accountability and a guard against mistakes, not a security boundary: whoever has
// DATABASE_URL can change the database without the CLI.
import { hostname } from "node:os";
import { loadEnv } from "@sluice/config";
import type { PrismaClient } from "@sluice/db";
import {
  authorizeAction,
  getActorByEmail,
  isSpecRegistered,
  recordAuditEvent,
  type TAction,
  type TActor,
  type TAuditWho,
  type TTargetRef,
} from "@sluice/services";
import { specHash, type TPipelineSpec } from "@sluice/pipeline-spec";
import { z } from "zod";

/** Exit code of a command the actor may not run. */
export const EXIT_NOT_ALLOWED = 5;

const ZActorEnv = z.object({ SLUICE_ACTOR: z.string().trim().optional() });

export type TCliActor = { actor: TActor; label: string };

/** The acting user as the audit log records a CLI change. */
export function cliAuditWho(who: TCliActor): TAuditWho {
  return {
    actorUserId: who.actor.id,
    actor: who.actor.email,
    from: { origin: "cli", userAgent: `sluice-cli on ${hostname()}` },
  };
}

/** A registration made from the CLI, in the audit log (new pipelines and new versions; re-registering the live spec changes nothing). */
export async function auditRegistration(
  db: PrismaClient,
  who: TCliActor,
  name: string,
  reg: { pipelineId: string; version: number; created: boolean; replaced?: { version: number } },
  reason: string,
): Promise<void> {
  if (!reg.created) return;
  await recordAuditEvent(db, {
    ...cliAuditWho(who),
    action: "pipeline.register",
    target: { type: "pipeline", id: reg.pipelineId, label: name },
    reason,
    before: reg.replaced ? { version: reg.replaced.version } : null,
    after: { version: reg.version },
  });
}

/** The acting user, or a message saying what to set (printed by the caller). */
export async function resolveCliActor(
  db: PrismaClient,
  as: string | undefined,
): Promise<TCliActor | { refused: string }> {
  const email = as?.trim() || loadEnv(ZActorEnv).SLUICE_ACTOR;
  const source = as?.trim() ? "--as" : "SLUICE_ACTOR";
  if (!email) {
    return {
      refused:
        "who is acting? This command changes something: set SLUICE_ACTOR=<your email> or pass --as <email> (a user of this Sluice, e.g. operator@sluice.local). It is recorded with the change and allowed by that user's role and teams.",
    };
  }
  const found = await getActorByEmail(db, email);
  if ("missing" in found)
    return {
      refused: `${source}=${email}: no Sluice user has this email. Ask an admin to add you (console → Admin), or use your own email.`,
    };
  if ("disabled" in found)
    return { refused: `${source}=${email}: this user is disabled. Ask an admin to enable it.` };
  return { actor: found.actor, label: `cli:${found.actor.email}` };
}

/** Resolve the actor and decide; on a refusal print why and return null (exit EXIT_NOT_ALLOWED). */
export async function authorizeCli(
  db: PrismaClient,
  as: string | undefined,
  action: TAction,
  target: TTargetRef,
): Promise<TCliActor | null> {
  const who = await resolveCliActor(db, as);
  if ("refused" in who) {
    console.error(`not allowed: ${who.refused}`);
    return null;
  }
  const decision = await authorizeAction(db, who.actor, action, target);
  if (decision.ok) return who;
  // An unknown pipeline is the command's own business (it says how to register one).
  if (decision.code === "NOT_FOUND") return who;
  console.error(`not allowed: ${who.actor.email} (${who.actor.role}): ${decision.message}`);
  return null;
}

/**
 * A command given a spec file: running the live version again is a lifecycle action; anything that
 * registers (a new pipeline, a changed spec, --fresh-state) needs pipeline.register for its team.
 */
export async function authorizeSpecCli(
  db: PrismaClient,
  as: string | undefined,
  spec: TPipelineSpec,
  opts: { freshState?: boolean },
): Promise<TCliActor | null> {
  const registered = !opts.freshState && (await isSpecRegistered(db, spec.name, specHash(spec)));
  return registered
    ? authorizeCli(db, as, "pipeline.lifecycle", { pipeline: spec.name })
    : authorizeCli(db, as, "pipeline.register", { newPipeline: spec.name, ownerTeamSlug: spec.owner });
}
