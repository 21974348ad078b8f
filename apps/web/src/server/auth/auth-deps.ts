// What the console's sign-in is built from: the database, the signing secret, where it is served,
// single sign-on and the limits. Its own file because both the instance (create-auth.ts) and its
// hooks (auth-hooks.ts) take it, and neither should import the other for a type.
import type { PrismaClient } from "@sluice/db";
import type { Logger } from "pino";
import type { TSsoConfig } from "./sso-config";

export interface TAuthDeps {
  db: PrismaClient;
  secret: string;
  publicUrl: string;
  trustedOrigins: string[];
  sessionTtlHours: number;
  sso: TSsoConfig | null;
  logger: Logger;
  /** Sign-ins per client address per minute (default 10); one address can be many people behind a NAT. */
  signInsPerAddressPerMinute?: number;
}
