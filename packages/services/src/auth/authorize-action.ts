// The one authorization decision in Sluice. Every tRPC procedure (roleProcedure and actionProcedure in
// apps/web) and every CLI command that changes something asks here; nothing else decides who may do
// what. Pure functions decide; `authorizeAction` only looks up the target's owner team first.
import type { PrismaClient } from "@sluice/db";
import { ACTIONS, type TAction } from "./actions";
import type { TActor, TActorTeam } from "./actor";
import { hasRole, type TRole } from "./roles";

export type TDecision =
  | { ok: true; actor: TActor }
  | { ok: false; code: "UNAUTHENTICATED" | "FORBIDDEN" | "NOT_FOUND"; message: string };

/** What an action is done to. A pipeline's owner team decides for team-scoped roles. */
export type TTargetRef = { pipeline: string } | { newPipeline: string; ownerTeamSlug: string } | null;
export interface TResolvedTarget {
  pipeline: string;
  /** null: a new pipeline whose team does not exist yet (only an admin may create one). */
  ownerTeam: TActorTeam | null;
}

const SIGN_IN: TDecision = { ok: false, code: "UNAUTHENTICATED", message: "Sign in to continue." };
const list = (roles: readonly string[]) =>
  roles.length > 1 ? `${roles.slice(0, -1).join(", ")} or ${roles.at(-1)}` : roles[0];

/**
 * Who may, in words that do not read as a ranking of people: owners author their teams' pipelines,
 * operators run every pipeline — different jobs, not one above the other.
 */
const WHO: Record<TRole, string> = {
  viewer: "every signed-in person",
  operator: "operators (who run every pipeline), pipeline owners and admins",
  owner:
    "pipeline owners (for their own teams' pipelines) and admins: authoring a spec decides what a pipeline computes, which is its owning team's call — operators run pipelines but do not author them",
  admin: "admins",
};

/** Reads: the role ladder (viewer < operator < owner < admin). */
export function decideRole(actor: TActor | null, minRole: TRole): TDecision {
  if (!actor) return SIGN_IN;
  if (hasRole(actor.role, minRole)) return { ok: true, actor };
  return {
    ok: false,
    code: "FORBIDDEN",
    message: `This is for ${WHO[minRole]} (the ${minRole} role); you are signed in as ${actor.role}. If it is part of your job, ask an admin for it.`,
  };
}

/** Whether the actor's role could do the action to some target (decided without the target). */
export function decideActionRole(actor: TActor | null, action: TAction): TDecision | "needs-target" {
  if (!actor) return SIGN_IN;
  const rule = ACTIONS[action];
  if (actor.role === "admin" || (rule.fleet as readonly TRole[]).includes(actor.role))
    return { ok: true, actor };
  if ((rule.ownTeam as readonly TRole[]).includes(actor.role)) return "needs-target";
  const allowed = [...rule.fleet, ...rule.ownTeam.map((r) => `${r} (of the pipeline's team)`), "admin"];
  return {
    ok: false,
    code: "FORBIDDEN",
    message: `Only ${list(allowed)} may ${rule.describe}; you are signed in as ${actor.role}. Ask an admin to change your role.`,
  };
}

/** For enabling a button: could this actor do the action to some target (the server decides each one)? */
export function mayDoAction(actor: TActor | null, action: TAction): boolean {
  const decision = decideActionRole(actor, action);
  return decision === "needs-target" || decision.ok;
}

/** The full decision, with the target's owner team known. */
export function decideAction(
  actor: TActor | null,
  action: TAction,
  target: TResolvedTarget | null,
): TDecision {
  const byRole = decideActionRole(actor, action);
  if (byRole !== "needs-target") return byRole;
  const who = actor!;
  if (!target)
    return { ok: false, code: "FORBIDDEN", message: `Name the pipeline to ${ACTIONS[action].describe}.` };
  if (target.ownerTeam && who.teams.some((t) => t.id === target.ownerTeam!.id))
    return { ok: true, actor: who };
  const yours =
    who.teams.length > 0 ? `your teams: ${who.teams.map((t) => t.name).join(", ")}` : "you are in no team";
  const owner = target.ownerTeam
    ? `it belongs to ${target.ownerTeam.name}`
    : "its team does not exist yet (an admin creates teams)";
  return {
    ok: false,
    code: "FORBIDDEN",
    message: `As an owner you may ${ACTIONS[action].describe} only for your own teams' pipelines: "${target.pipeline}" — ${owner}; ${yours}. Ask an admin to add you to the team, or an operator to act.`,
  };
}

/** Decide for a target named by the caller (a pipeline name), looking up its owner team. */
export async function authorizeAction(
  db: PrismaClient,
  actor: TActor | null,
  action: TAction,
  ref: TTargetRef,
): Promise<TDecision> {
  const byRole = decideActionRole(actor, action);
  if (byRole !== "needs-target") return byRole;
  const target = await resolveTarget(db, ref);
  if (target === "missing")
    return {
      ok: false,
      code: "NOT_FOUND",
      message: `No pipeline named "${ref && "pipeline" in ref ? ref.pipeline : ""}".`,
    };
  return decideAction(actor, action, target);
}

async function resolveTarget(db: PrismaClient, ref: TTargetRef): Promise<TResolvedTarget | null | "missing"> {
  if (!ref) return null;
  const team = { select: { id: true, slug: true, name: true } } as const;
  if ("pipeline" in ref) {
    const p = await db.pipeline.findUnique({
      where: { name: ref.pipeline },
      select: { name: true, ownerTeam: team },
    });
    return p ? { pipeline: p.name, ownerTeam: p.ownerTeam } : "missing";
  }
  const existing = await db.pipeline.findUnique({
    where: { name: ref.newPipeline },
    select: { name: true, ownerTeam: team },
  });
  // A new version of an existing pipeline is decided by the team that owns it now: a spec that names
  // another owner cannot take a pipeline away from its team.
  if (existing && existing.ownerTeam.slug !== ref.ownerTeamSlug) {
    return { pipeline: ref.newPipeline, ownerTeam: existing.ownerTeam };
  }
  const owner =
    existing?.ownerTeam ?? (await db.team.findUnique({ where: { slug: ref.ownerTeamSlug }, ...team }));
  return { pipeline: ref.newPipeline, ownerTeam: owner };
}

/** An action was refused; carries the decision's code and message for the edge to report. */
export class NotAllowedError extends Error {
  constructor(
    readonly code: "UNAUTHENTICATED" | "FORBIDDEN" | "NOT_FOUND",
    message: string,
  ) {
    super(message);
    this.name = "NotAllowedError";
  }
}

/** authorizeAction that throws NotAllowedError on a refusal and returns the actor otherwise. */
export async function requireAction(
  db: PrismaClient,
  actor: TActor | null,
  action: TAction,
  ref: TTargetRef,
): Promise<TActor> {
  const decision = await authorizeAction(db, actor, action, ref);
  if (!decision.ok) throw new NotAllowedError(decision.code, decision.message);
  return decision.actor;
}
