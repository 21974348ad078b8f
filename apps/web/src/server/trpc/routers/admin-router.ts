// The Admin page: people (create/invite, role, disable, reset password), teams (members, on-call
// email, contact points and their test notification) and the single sign-on group mapping. Admins only (actions admin.users / admin.teams /
// admin.sso); every change is recorded in the audit log by its service, with the admin as actor.
import { pipelineEnv, smtpOptions } from "@sluice/config";
import {
  createContactPoint,
  removeContactPoint,
  sendTestNotification,
  updateContactPoint,
  createSsoMapping,
  createTeam,
  createUser,
  deleteSsoMapping,
  findAdminTeams,
  findSsoMappings,
  findUsers,
  resetUserPassword,
  setTeamMember,
  setTeamOnCall,
  setUserDisabled,
  setUserRole,
  type TActor,
} from "@sluice/services";
import type { TRPCRouterRecord } from "@trpc/server";
import type { TTrpcContext } from "../context";
import { webEnv } from "../../env";
import { consoleOrigins } from "../../web-env";
import { actionProcedure } from "../init";
import {
  ZAdminCreateContactPointSchema,
  ZAdminRemoveContactPointSchema,
  ZAdminTestContactPointSchema,
  ZAdminUpdateContactPointSchema,
  ZAdminCreateSsoMappingSchema,
  ZAdminCreateTeamSchema,
  ZAdminCreateUserSchema,
  ZAdminDeleteSsoMappingSchema,
  ZAdminResetPasswordSchema,
  ZAdminSetDisabledSchema,
  ZAdminSetOnCallSchema,
  ZAdminSetRoleSchema,
  ZAdminTeamMemberSchema,
  ZNoInputSchema,
} from "./admin-router.types";

/** Run an admin service with the signed-in admin as actor. */
function asAdmin<T>(
  ctx: TTrpcContext & { user: TActor },
  change: (admin: { actor: TActor; from: TTrpcContext["from"] }) => Promise<T>,
): Promise<T> {
  return change({ actor: ctx.user, from: ctx.from });
}

export const adminRouter = {
  users: actionProcedure("admin.users", ZNoInputSchema).query(({ ctx }) => findUsers(ctx.db)),
  teams: actionProcedure("admin.teams", ZNoInputSchema).query(({ ctx }) => findAdminTeams(ctx.db)),
  ssoMappings: actionProcedure("admin.sso", ZNoInputSchema).query(({ ctx }) => findSsoMappings(ctx.db)),

  createUser: actionProcedure("admin.users", ZAdminCreateUserSchema).mutation(({ ctx, input }) =>
    asAdmin(ctx, (a) => createUser(ctx.db, a, input)),
  ),
  setRole: actionProcedure("admin.users", ZAdminSetRoleSchema).mutation(({ ctx, input }) =>
    asAdmin(ctx, (a) => setUserRole(ctx.db, a, input)),
  ),
  setDisabled: actionProcedure("admin.users", ZAdminSetDisabledSchema).mutation(({ ctx, input }) =>
    asAdmin(ctx, (a) => setUserDisabled(ctx.db, a, input)),
  ),
  resetPassword: actionProcedure("admin.users", ZAdminResetPasswordSchema).mutation(({ ctx, input }) =>
    asAdmin(ctx, (a) => resetUserPassword(ctx.db, a, input)),
  ),

  createTeam: actionProcedure("admin.teams", ZAdminCreateTeamSchema).mutation(({ ctx, input }) =>
    asAdmin(ctx, (a) => createTeam(ctx.db, a, input)),
  ),
  setTeamMember: actionProcedure("admin.teams", ZAdminTeamMemberSchema).mutation(({ ctx, input }) =>
    asAdmin(ctx, (a) => setTeamMember(ctx.db, a, input)),
  ),
  setOnCall: actionProcedure("admin.teams", ZAdminSetOnCallSchema).mutation(({ ctx, input }) =>
    asAdmin(ctx, (a) => setTeamOnCall(ctx.db, a, input)),
  ),
  createContactPoint: actionProcedure("admin.teams", ZAdminCreateContactPointSchema).mutation(
    ({ ctx, input }) => asAdmin(ctx, (a) => createContactPoint(ctx.db, a, input)),
  ),
  updateContactPoint: actionProcedure("admin.teams", ZAdminUpdateContactPointSchema).mutation(
    ({ ctx, input }) => asAdmin(ctx, (a) => updateContactPoint(ctx.db, a, input)),
  ),
  removeContactPoint: actionProcedure("admin.teams", ZAdminRemoveContactPointSchema).mutation(
    ({ ctx, input }) => asAdmin(ctx, (a) => removeContactPoint(ctx.db, a, input)),
  ),
  /** Sent from this console process (its environment and SMTP settings), answered at once. */
  testContactPoint: actionProcedure("admin.teams", ZAdminTestContactPointSchema).mutation(({ ctx, input }) =>
    asAdmin(ctx, (a) => {
      const env = webEnv();
      return sendTestNotification(ctx.db, a, input, {
        env: pipelineEnv(),
        publicUrl: consoleOrigins(env).publicUrl,
        smtp: smtpOptions(env),
      });
    }),
  ),

  createSsoMapping: actionProcedure("admin.sso", ZAdminCreateSsoMappingSchema).mutation(({ ctx, input }) =>
    asAdmin(ctx, (a) => createSsoMapping(ctx.db, a, input)),
  ),
  deleteSsoMapping: actionProcedure("admin.sso", ZAdminDeleteSsoMappingSchema).mutation(({ ctx, input }) =>
    asAdmin(ctx, (a) => deleteSsoMapping(ctx.db, a, input)),
  ),
} satisfies TRPCRouterRecord;
