// The closed set of things a person can change in Sluice, and which roles may do each one. This table
// is the whole policy: authorize-action.ts applies it. To add an action (a later feature), add a row.
//
// - `fleet`: roles allowed on every target (operators run the whole fleet).
// - `ownTeam`: roles allowed only when the target pipeline belongs to one of the actor's teams.
// - admin may do everything, so it is never listed.
import type { TRole } from "./roles";

export interface TActionRule {
  /** What the action needs to be decided: a pipeline (its owner team), or nothing. */
  target: "pipeline" | "none";
  fleet: readonly TRole[];
  ownTeam: readonly TRole[];
  /** Completes "you may not …" in a refusal. */
  describe: string;
}

export const ACTIONS = {
  "pipeline.lifecycle": {
    target: "pipeline",
    fleet: ["operator"],
    ownTeam: ["owner"],
    describe: "start, pause, resume, stop or restart a pipeline",
  },
  "pipeline.register": {
    target: "pipeline",
    fleet: [],
    ownTeam: ["owner"],
    describe: "register a pipeline or a new version of its spec",
  },
  "webhook.requeue": {
    target: "pipeline",
    fleet: ["operator"],
    ownTeam: ["owner"],
    describe: "re-send a pipeline's failed webhook deliveries",
  },
  "alert.respond": {
    target: "pipeline",
    fleet: ["operator"],
    ownTeam: ["owner"],
    describe: "acknowledge, resolve or silence a pipeline's alerts",
  },
  "alert.rules": {
    target: "pipeline",
    fleet: [],
    ownTeam: ["owner"],
    describe: "change a pipeline's alert rules",
  },
  "change.request": {
    target: "pipeline",
    fleet: ["operator"],
    ownTeam: ["owner"],
    describe: "ask for a checkpoint reset or a schema change (someone else approves it)",
  },
  "change.approve": {
    target: "pipeline",
    fleet: ["operator"],
    ownTeam: [],
    describe: "approve or reject a change request (never your own)",
  },
  "change.cancel": {
    target: "pipeline",
    fleet: ["operator"],
    ownTeam: ["owner"],
    describe: "cancel a change request you asked for",
  },
  "change.comment": {
    target: "pipeline",
    fleet: ["operator"],
    ownTeam: ["owner"],
    describe: "comment on a change request",
  },
  "deadletter.discard": {
    target: "pipeline",
    fleet: ["operator"],
    ownTeam: ["owner"],
    describe: "discard a pipeline's dead letters (with a reason; they stay for the record)",
  },
  "deadletter.replay": {
    target: "pipeline",
    fleet: ["operator"],
    ownTeam: ["owner"],
    describe: "replay a pipeline's dead letters through its serving version (with a reason)",
  },
  "admin.users": {
    target: "none",
    fleet: [],
    ownTeam: [],
    describe: "manage users (invite, role, disable, reset password)",
  },
  "admin.teams": {
    target: "none",
    fleet: [],
    ownTeam: [],
    describe: "manage teams (members, on-call email, contact points)",
  },
  "admin.sso": {
    target: "none",
    fleet: [],
    ownTeam: [],
    describe: "change the single sign-on group mapping",
  },
} as const satisfies Record<string, TActionRule>;

export type TAction = keyof typeof ACTIONS;
export const ACTION_NAMES = Object.keys(ACTIONS) as TAction[];
