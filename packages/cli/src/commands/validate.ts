import { formatSpecErrors, specHash } from "@sluice/spec";
import { loadSpecFile } from "../load-spec";

export async function validateCommand(file: string): Promise<number> {
  const result = await loadSpecFile(file);
  if (!result.ok) {
    console.error(`${file}: ${result.errors.length} error(s)\n${formatSpecErrors(result.errors, file)}`);
    return 1;
  }
  console.log(`${file}: valid pipeline "${result.spec.name}" (spec hash ${specHash(result.spec).slice(0, 12)})`);
  return 0;
}
