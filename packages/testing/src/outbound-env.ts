// Environment lookups for a runner opened in-process by a test: the test process's environment, which
// vitest.config.ts gives the outbound settings local receivers need (SLUICE_OUTBOUND_ALLOW, SLUICE_SIGNING_KEY).
export const testProcessEnv = (name: string): string | undefined => process.env[name];
