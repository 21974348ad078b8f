// Prisma CLI configuration. Migrations run through the JavaScript engine and @prisma/adapter-pg,
// so no native Prisma engine binary has to be downloaded (see docs/database.md for why).
import { defineConfig } from "prisma/config";
import { createMigrationAdapter } from "./packages/db/src/migration-adapter";

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  adapter: createMigrationAdapter,
});
