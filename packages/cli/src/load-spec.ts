import { readFile } from "node:fs/promises";
import { parseSpec, type TValidationResult } from "@sluice/pipeline-spec";

/** Reads and validates a spec file (YAML, or strict JSON for *.json). */
export async function loadSpecFile(path: string): Promise<TValidationResult> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    return { ok: false, errors: [{ path: "", message: `cannot read ${path}: ${(err as Error).message}` }] };
  }
  return parseSpec(text, { format: path.endsWith(".json") ? "json" : "yaml" });
}
