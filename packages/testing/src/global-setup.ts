import path from "node:path";
import { fileURLToPath } from "node:url";
import { prepareTemplateDatabase } from "./database";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export default async function setup(): Promise<void> {
  await prepareTemplateDatabase(repoRoot);
}
