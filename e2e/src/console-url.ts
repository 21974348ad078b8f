// The console under test: SLUICE_URL, or a local `npm run start -w @sluice/web`.
export const baseUrl = (process.env.SLUICE_URL ?? "http://127.0.0.1:3000").replace(/\/$/, "");

/** Fail fast with the command to run, instead of a 30-second browser timeout. */
export async function assertConsoleReachable(): Promise<void> {
  try {
    await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(10_000) });
  } catch {
    throw new Error(
      `No Sluice console answers at ${baseUrl}. Start one (npm run build -w @sluice/web && ` +
        `PORT=3000 npm run start -w @sluice/web) or set SLUICE_URL.`,
    );
  }
}
