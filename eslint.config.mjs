// One lint config for every workspace. `process.env` is read only in packages/config and in
// scripts; everything else receives typed config objects.
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/.next/**", "**/.cache/**", "**/dist/**", "**/next-env.d.ts"] },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-properties": [
        "error",
        { object: "process", property: "env", message: "Read configuration through @sluice/config." },
      ],
      "no-eval": "error",
      "no-new-func": "error",
    },
  },
  {
    // Test support spawns processes and points them at test services: it may read and pass env.
    files: [
      "packages/config/**",
      "packages/testing/**",
      "**/src/testing/**",
      "scripts/**",
      "**/*.test.ts",
      "e2e/**",
      "bench/**",
      "prisma.config.ts",
      "packages/db/src/migration-adapter.ts",
      "vitest.config.ts",
      "apps/web/next.config.ts",
    ],
    rules: { "no-restricted-properties": "off" },
  },
);
