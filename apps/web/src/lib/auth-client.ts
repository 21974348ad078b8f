// The auth library's browser client: signing in (password or single sign-on), out, and changing
// one's password go to its endpoints at /api/auth on the console's own origin.
import { createAuthClient } from "better-auth/client";

export const authClient = createAuthClient({ basePath: "/api/auth" });

/** The single sign-on provider's id (src/server/auth/sso-config.ts). */
export const SSO_PROVIDER_ID = "sso";
