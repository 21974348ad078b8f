// The demo's pipeline specs (demo/pipelines/*.yaml), registered at seed time so the console lists
// them before their first batch runs.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { parseSpecOrThrow, type TPipelineSpec } from "@sluice/pipeline-spec";

export async function loadDemoPipelineSpecs(dir: string): Promise<{ file: string; spec: TPipelineSpec }[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".yaml")).sort();
  return Promise.all(
    files.map(async (f) => ({
      file: path.join(dir, f),
      spec: parseSpecOrThrow(await readFile(path.join(dir, f), "utf8")),
    })),
  );
}
