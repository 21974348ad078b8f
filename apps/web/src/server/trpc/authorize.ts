// The decision behind roleProcedure, kept pure so it is tested without a server: no session means
// UNAUTHORIZED (sign in), a session below the required role means FORBIDDEN (ask for the role).
import { hasRole, type TRole, type TSessionUser } from "@sluice/services";

export type TAuthorization =
  { ok: true; user: TSessionUser } | { ok: false; code: "UNAUTHORIZED" | "FORBIDDEN"; message: string };

export function authorize(user: TSessionUser | null, minRole: TRole): TAuthorization {
  if (!user) return { ok: false, code: "UNAUTHORIZED", message: "Sign in to continue." };
  if (!hasRole(user.role, minRole)) {
    return {
      ok: false,
      code: "FORBIDDEN",
      message: `This needs the ${minRole} role; you are signed in as ${user.role}. Ask an admin to change your role.`,
    };
  }
  return { ok: true, user };
}
