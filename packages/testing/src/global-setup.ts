import path from "node:path";
import { fileURLToPath } from "node:url";
import { prepareTemplateDatabase } from "./database";
import { buildEntrypoints } from "./entrypoints";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export default async function setup(): Promise<() => Promise<void>> {
  const [dropTemplate, removeBuild] = await Promise.all([
    prepareTemplateDatabase(repoRoot),
    buildEntrypoints(),
  ]);
  // The returned function is vitest's teardown: it drops this run's template and bundles.
  return async () => {
    await Promise.all([dropTemplate(), removeBuild()]);
  };
}
