// The console's environment schema: the shared service settings plus what only the web app needs.
import { ZServiceEnv } from "@sluice/config";
import { z } from "zod";

export const ZWebEnv = ZServiceEnv.extend({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  /**
   * HMAC-SHA256 key for session cookies. Optional: when unset, a random key is generated once and
   * kept in `.data/session-secret` (git-ignored) so restarts keep sessions. Set it explicitly when
   * more than one console instance serves the same users.
   */
  SLUICE_SESSION_SECRET: z
    .string()
    .min(32, "SLUICE_SESSION_SECRET must be at least 32 characters (try `openssl rand -base64 48`)")
    .optional(),
  /** Where the generated session secret is kept; relative to the console's working directory. */
  SLUICE_DATA_DIR: z.string().default(".data"),
  /** How long a sign-in lasts. */
  SLUICE_SESSION_TTL_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 30)
    .default(12),
});
export type TWebEnv = z.infer<typeof ZWebEnv>;
