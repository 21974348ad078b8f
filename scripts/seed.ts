// Seeds the demo teams, users and pipelines into DATABASE_URL. Used by the quick start.
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { createPrismaClient } from "@sluice/db";
import { seedDemo } from "@sluice/services";

const env = loadEnv(ZServiceEnv);
const demoPassword = process.env.SLUICE_DEMO_PASSWORD ?? "sluice-demo";
const db = createPrismaClient(env.DATABASE_URL);
try {
  await seedDemo(db, demoPassword);
  console.log(`seeded demo data into ${new URL(env.DATABASE_URL).pathname.slice(1)}`);
} finally {
  await db.$disconnect();
}
