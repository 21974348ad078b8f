// Two projects: `unit` (pure logic, *.test.ts) and `integration` (*.int.test.ts, against the real
// Postgres, Redis and Kafka that scripts/services.sh starts). e2e/ runs separately with Playwright.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const include = [
  "packages/**/src/**/*.test.ts",
  "workers/src/**/*.test.ts",
  "apps/web/src/**/*.test.ts",
  "scripts/**/*.test.ts",
];

export default defineConfig({
  // The console's server modules import "server-only", which throws outside Next.js.
  resolve: {
    alias: {
      "server-only": fileURLToPath(new URL("packages/testing/src/server-only-stub.ts", import.meta.url)),
    },
  },
  test: {
    projects: [
      { extends: true, test: { name: "unit", include, exclude: ["**/*.int.test.ts", "**/node_modules/**"] } },
      {
        extends: true,
        test: {
          name: "integration",
          include: include.map((p) => p.replace("*.test.ts", "*.int.test.ts")),
          globalSetup: ["packages/testing/src/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Two cores: integration files share one Kafka broker and Postgres; two at a time is plenty.
          maxWorkers: 2,
        },
      },
    ],
  },
});
