// The allowed arrows between Sluice's packages, checked by `npm test` (dependency-cruiser). Entry points
// (the console, the workers, the CLI) sit on top; the queue client over the services; the services over
// the engine; the engine over the pipeline spec and outbound HTTP; the spec, outbound HTTP, db, config and
// the retry policy (which every package may use) import no other package. Nothing imports the console or
// the workers, test support stays out of production code, and no module imports itself back through
// others (no cycles, type-only ones too).
// docs/architecture.md draws the same arrows; change both together.

/** Tests and test support: they may use test fixtures and the packages they test. */
const TESTS = "(\\.test\\.ts$|\\.test-helpers\\.ts$|/testing/)";
const pkg = (names) => `^packages/(${names})/`;

const below = (name, from, forbidden) => ({
  name,
  severity: "error",
  comment: `${from} may not import ${forbidden}`,
  from: { path: pkg(from), pathNot: TESTS },
  to: { path: forbidden },
});

module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment:
        "A cycle (type-only imports included) means two modules are one concept: give the shared part its own file.",
      from: {},
      to: { circular: true },
    },
    {
      name: "nothing-imports-the-console",
      severity: "error",
      from: { pathNot: "^apps/web/" },
      to: { path: "^apps/web/" },
    },
    {
      name: "nothing-imports-the-workers",
      severity: "error",
      comment:
        "The workers app is a process: what others need from it belongs in a package (e.g. @sluice/queue).",
      from: { pathNot: "^workers/" },
      to: { path: "^workers/" },
    },
    {
      name: "nothing-imports-the-cli",
      severity: "error",
      from: { pathNot: "^packages/cli/" },
      to: { path: "^packages/cli/" },
    },
    below(
      "queue-over-services",
      "queue",
      pkg("engine|db|config|cli|producer|testing|outbound-http|pipeline-spec"),
    ),
    below("services-over-engine", "services", pkg("queue|cli|producer|testing")),
    below("engine-over-spec", "engine", pkg("services|queue|db|config|cli|producer|testing")),
    {
      name: "leaves",
      severity: "error",
      comment:
        "The pipeline spec, outbound HTTP, db, config and the retry policy import no other Sluice package.",
      from: { path: "^packages/(pipeline-spec|outbound-http|db|config|retry-policy)/", pathNot: TESTS },
      to: { path: "^(packages|apps|workers)/", pathNot: "^packages/$1/" },
    },
    below(
      "producer-over-config",
      "producer",
      pkg("engine|services|queue|db|cli|testing|outbound-http|pipeline-spec"),
    ),
    {
      name: "test-support-stays-in-tests",
      severity: "error",
      comment: "Production code never imports test fixtures or the demo producer.",
      from: { path: "^(apps|workers|packages)/", pathNot: `${TESTS}|^packages/producer/` },
      to: { path: "(^packages/(testing|producer)/|/testing/)" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|\\.next|\\.cache|\\.data|dist)/" },
    // Type-only imports count: a type-only cycle is still two files that need each other.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".d.ts"],
    },
    skipAnalysisNotInRules: true,
  },
};
