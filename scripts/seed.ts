// Seeds the demo teams, users and pipelines into DATABASE_URL. Used by the quick start and the e2e
// tests. Idempotent: an unchanged pipeline spec keeps its version. SLUICE_DEMO_RECEIVER_URL (the demo
// on-call receiver, scripts/demo-receivers.ts) gives the demo teams contact points that page it.
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { createPrismaClient } from "@sluice/db";
import { registerPipelineVersion } from "@sluice/engine";
import { ensureDefaultRules, loadDemoPipelineSpecs, seedDemo } from "@sluice/services";

const env = loadEnv(ZServiceEnv);
const demoPassword = process.env.SLUICE_DEMO_PASSWORD ?? "sluice-demo";
const pipelinesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../demo/pipelines");

const db = createPrismaClient(env.DATABASE_URL);
const pool = new pg.Pool({ connectionString: env.DATABASE_URL });
try {
  await seedDemo(db, demoPassword, { onCallReceiverUrl: process.env.SLUICE_DEMO_RECEIVER_URL });
  for (const { spec } of await loadDemoPipelineSpecs(pipelinesDir)) {
    const reg = await registerPipelineVersion(pool, spec);
    console.log(`pipeline ${spec.name}: version ${reg.version}${reg.created ? " (new)" : ""}`);
  }
  // The demo's pipelines get their default alert rules now (the workers' evaluator would on its first tick).
  await ensureDefaultRules(db);
  console.log(`seeded demo data into ${new URL(env.DATABASE_URL).pathname.slice(1)}`);
} finally {
  await db.$disconnect();
  await pool.end();
}
