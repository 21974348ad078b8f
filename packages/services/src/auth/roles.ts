// Sluice's four roles form one ladder: each role can do everything the roles below it can.
// Kept here (not in the web app) so the console, the CLI and the workers rank roles the same way.
import type { Role } from "@sluice/db";

export const ROLES = ["viewer", "operator", "owner", "admin"] as const satisfies readonly Role[];
export type TRole = (typeof ROLES)[number];

const RANK: Record<TRole, number> = { viewer: 0, operator: 1, owner: 2, admin: 3 };

/** True when `role` is `minRole` or above it on the ladder. */
export function hasRole(role: TRole, minRole: TRole): boolean {
  return RANK[role] >= RANK[minRole];
}
