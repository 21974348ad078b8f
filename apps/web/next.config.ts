import path from "node:path";
import type { NextConfig } from "next";

// The console builds offline: no next/font/google (system fonts), no telemetry. The package scripts
// set NEXT_TELEMETRY_DISABLED=1 too, because `next dev` starts telemetry before it reads this file.
process.env.NEXT_TELEMETRY_DISABLED ??= "1";

const repoRoot = path.resolve(import.meta.dirname, "../..");

const nextConfig: NextConfig = {
  // Internal packages are consumed as TypeScript source (their exports point at src/index.ts).
  transpilePackages: ["@sluice/config", "@sluice/db", "@sluice/services", "@sluice/queue"],
  // Node-only clients with native sockets or worker threads: load them from node_modules at runtime.
  serverExternalPackages: ["bullmq", "ioredis", "kafkajs", "prom-client", "pino", "@prisma/adapter-pg", "pg"],
  // Workspace packages live above apps/web; trace and resolve from the repository root.
  outputFileTracingRoot: repoRoot,
  turbopack: { root: repoRoot },
  poweredByHeader: false,
};

export default nextConfig;
