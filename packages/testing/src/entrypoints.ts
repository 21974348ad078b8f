// The CLI and the worker as child processes, for the tests that kill, race or restart them. The
// integration run's global setup bundles both once (esbuild: the workspace packages inlined, libraries
// left in node_modules) and every spawn runs the bundle: `node --import tsx` resolves and transforms
// every TypeScript module again on each start — about twice the CPU (~3.5 s against ~1.6 s a start
// on a 2-core machine), and the suites start the CLI hundreds of times. Run without that setup (a
// single file under another runner), a spawn falls back to the sources through tsx.
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

const SOURCES = {
  cli: "packages/cli/src/main.ts",
  worker: "workers/src/main.ts",
} as const;

export type TEntrypoint = keyof typeof SOURCES;

/** Set by the global setup for the test processes (and inherited by what they spawn). */
const BUILD_ENV = "SLUICE_TEST_ENTRYPOINTS";

// Workspace packages (@sluice/*) are TypeScript sources: inlined. Everything else is a library that
// node loads from node_modules as it would for the sources.
const librariesExternal: Plugin = {
  name: "libraries-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith("@sluice/") ? undefined : { path: args.path, external: true },
    );
  },
};

/** Bundles the CLI and the worker into a directory of this run; returns the cleanup. */
export async function buildEntrypoints(): Promise<() => Promise<void>> {
  const dir = path.join(REPO_ROOT, ".data/test-build", String(process.pid));
  await mkdir(dir, { recursive: true });
  await build({
    entryPoints: Object.fromEntries(Object.entries(SOURCES).map(([k, v]) => [k, path.join(REPO_ROOT, v)])),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outdir: dir,
    outExtension: { ".js": ".mjs" },
    sourcemap: "linked",
    plugins: [librariesExternal],
    logLevel: "warning",
  });
  process.env[BUILD_ENV] = dir;
  return () => rm(dir, { recursive: true, force: true });
}

/** The node arguments that start the CLI or the worker (then its own arguments follow). */
export function entrypointArgs(name: TEntrypoint): string[] {
  const built = process.env[BUILD_ENV];
  return built
    ? ["--enable-source-maps", path.join(built, `${name}.mjs`)]
    : ["--import", "tsx", path.join(REPO_ROOT, SOURCES[name])];
}
