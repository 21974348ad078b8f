// One lint config for every workspace. `process.env` is read only in packages/config and in
// scripts; everything else receives typed config objects.
import fs from "node:fs";
import path from "node:path";
import nextPlugin from "@next/eslint-plugin-next";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";
import n from "eslint-plugin-n";

// Every workspace declares what it imports (its own package.json; the root's tools are shared): an import
// that works only because npm hoisted another workspace's dependency breaks the day that one drops it,
// and leaves turbo's graph wrong. eslint-plugin-n 18.5 reads a tsconfig `paths` key "@/*" (the console's
// and the root program's) as the alias "@" and then skips every scoped package (@sluice/*, @trpc/*) in
// those files; shown the file as .js, the rule does no alias matching: "@/…" stays unresolved and
// unchecked, packages are checked.
const noExtraneousImport = n.rules["no-extraneous-import"];
const declaredImports = {
  meta: noExtraneousImport.meta,
  create(context) {
    const physicalFilename = context.physicalFilename.replace(/\.[cm]?tsx?$/, ".js");
    return noExtraneousImport.create(
      Object.create(context, { physicalFilename: { value: physicalFilename } }),
    );
  },
};

// The console's client components ("use client" as their first line): what they import ships to the
// browser, so nothing server-only may be among it — the console's server modules, the database, the
// services and engine (their pure subpaths are made for the browser), env, Node's drivers. Type-only
// imports (the tRPC router's type, a service's view type) are erased and stay allowed.
// Read from the repository root whatever directory eslint runs in (`turbo run lint` runs it in each
// workspace); the `files` patterns below are relative to this file, as flat config's always are.
const webSrc = "apps/web/src";
const clientComponents = fs
  .readdirSync(path.join(import.meta.dirname, webSrc), { recursive: true })
  .filter((file) => /\.tsx?$/.test(file))
  .map((file) => path.join(webSrc, file))
  .filter((file) =>
    /^\s*["']use client["']/.test(fs.readFileSync(path.join(import.meta.dirname, file), "utf8")),
  );
const serverOnly = "is server-only: a client component ships to the browser.";
const clientImportRules = {
  "@typescript-eslint/no-restricted-imports": [
    "error",
    {
      paths: [
        "server-only",
        "@sluice/db",
        "@sluice/services",
        "@sluice/engine",
        "@sluice/config",
        "@sluice/queue",
      ]
        .concat(["pg", "kafkajs", "bullmq", "ioredis", "pino", "prom-client", "better-auth/api"])
        .map((name) => ({ name, message: `${name} ${serverOnly}`, allowTypeImports: true })),
      patterns: [
        {
          group: ["@/server/*", "@/server/**"],
          message: `The console's src/server ${serverOnly}`,
          allowTypeImports: true,
        },
        { group: ["node:*"], message: `Node's built-in modules are ${serverOnly}` },
      ],
    },
  ],
};

// The engine owns the checkpoint and the offset log (packages/engine/src/store/checkpoint-store.ts,
// offset-log-store.ts): SQL naming `checkpoints` or `offset_log`, and Prisma's own calls on them, stay
// there. Everyone else calls the engine's functions, so fencing and the columns' meaning live in one
// place. Tests, test support, migrations and the benchmark still read and seed them directly.
const ENGINE_TABLE = /\b(?:from|join|update|into|table)\s+(?:checkpoints|offset_log)\b/i;
const engineTableMessage =
  "The engine owns `checkpoints` and `offset_log`: call @sluice/engine's checkpoint-store / offset-log-store functions instead.";
const engineOwnsTables = {
  meta: { type: "problem", schema: [], messages: { owned: engineTableMessage } },
  create(context) {
    const check = (node, text) => {
      if (ENGINE_TABLE.test(text)) context.report({ node, messageId: "owned" });
    };
    return {
      Literal: (node) => typeof node.value === "string" && check(node, node.value),
      TemplateElement: (node) => check(node, node.value.raw),
      // db.checkpoint.findUnique(…), tx.offsetLog.create(…): the same tables through Prisma's client.
      "MemberExpression[object.type='MemberExpression'][object.property.name=/^(checkpoint|offsetLog)$/][property.name=/^(find|create|update|upsert|delete|count|aggregate|groupBy)/]":
        (node) => context.report({ node, messageId: "owned" }),
    };
  },
};

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "**/.next/**",
      "**/.cache/**",
      "**/.data/**",
      "**/dist/**",
      "**/next-env.d.ts",
      "packages/db/src/generated/**",
    ],
  },
  ...tseslint.configs.recommended,
  {
    plugins: {
      sluice: { rules: { "declared-imports": declaredImports, "engine-owns-tables": engineOwnsTables } },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-properties": [
        "error",
        { object: "process", property: "env", message: "Read configuration through @sluice/config." },
      ],
      "no-eval": "error",
      "no-new-func": "error",
      "sluice/declared-imports": "error",
      "sluice/engine-owns-tables": "error",
    },
  },
  {
    files: [
      "packages/engine/src/**",
      "**/*.test.ts",
      "**/src/testing/**",
      "packages/testing/**",
      "e2e/**",
      "bench/**",
      "prisma/**",
    ],
    rules: { "sluice/engine-owns-tables": "off" },
  },
  { files: ["apps/web/**/*.{ts,tsx}"], ...reactHooks.configs.flat.recommended },
  {
    files: ["apps/web/**/*.{ts,tsx}"],
    ...nextPlugin.configs["core-web-vitals"],
    settings: { next: { rootDir: "apps/web" } },
  },
  { files: clientComponents, rules: clientImportRules },
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
