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
          // Webhook and alert receivers in tests listen on 127.0.0.1, which Sluice refuses by default
          // (@sluice/outbound-http): allowed here, and signed with a test key, for the test processes and
          // every process they spawn. Tests of the refusal pass their own settings.
          env: {
            SLUICE_OUTBOUND_ALLOW: "127.0.0.1",
            SLUICE_SIGNING_KEY: "integration-tests-signing-key-not-a-secret",
          },
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Three files at a time on two cores: each has its own database, topic and queue, and most of
          // a file's time is spent waiting on Kafka, Postgres and the processes it starts, not on the CPU.
          maxWorkers: 3,
        },
      },
    ],
  },
});
