import path from "node:path";
import { fileURLToPath } from "node:url";
import { prepareTemplateDatabase } from "./database";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export default async function setup(): Promise<() => Promise<void>> {
  // The returned function is vitest's teardown: it drops this run's template.
  return prepareTemplateDatabase(repoRoot);
}
