// The HMAC key for session cookies: SLUICE_SESSION_SECRET when set; otherwise a random key generated
// on first use and kept in <SLUICE_DATA_DIR>/session-secret (mode 0600, git-ignored), so a restart
// does not sign everybody out. The key is never logged.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

export interface TSessionSecretSource {
  SLUICE_SESSION_SECRET?: string;
  SLUICE_DATA_DIR: string;
}

export function resolveSessionSecret(
  env: TSessionSecretSource,
  onGenerated?: (file: string) => void,
): string {
  if (env.SLUICE_SESSION_SECRET) return env.SLUICE_SESSION_SECRET;
  const file = path.resolve(env.SLUICE_DATA_DIR, "session-secret");
  const existing = readIfPresent(file);
  if (existing) return existing;
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    // "wx": if two processes start at once, exactly one writes and the other reads its key.
    writeFileSync(file, randomBytes(48).toString("base64url"), { flag: "wx", mode: 0o600 });
    onGenerated?.(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const written = readIfPresent(file);
  if (!written)
    throw new Error(`Could not read the session secret from ${file}; set SLUICE_SESSION_SECRET instead.`);
  return written;
}

function readIfPresent(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8").trim() || undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}
