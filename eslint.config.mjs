// One lint config for every workspace. `process.env` is read only in packages/config and in
// scripts; everything else receives typed config objects.
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

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/.next/**", "**/.cache/**", "**/dist/**", "**/next-env.d.ts"] },
  ...tseslint.configs.recommended,
  {
    plugins: { sluice: { rules: { "declared-imports": declaredImports } } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-properties": [
        "error",
        { object: "process", property: "env", message: "Read configuration through @sluice/config." },
      ],
      "no-eval": "error",
      "no-new-func": "error",
      "sluice/declared-imports": "error",
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
