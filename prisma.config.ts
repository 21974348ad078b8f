// Prisma CLI configuration. Migrations run through the JavaScript engine and @prisma/adapter-pg,
// so no native Prisma engine binary has to be downloaded (see docs/database.md for why).
import { defineConfig } from "prisma/config";
import { createMigrationAdapter } from "./packages/db/src/migration-adapter";

// The schema's datasource names DATABASE_URL; without it Prisma falls back to downloading a native
// engine (which fails offline). Commands that need no database (generate, diff) get the local default.
process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/sluice";

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  adapter: createMigrationAdapter,
});
