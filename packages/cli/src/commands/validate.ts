import { formatStateFindings, previewRegistration } from "@sluice/engine";
import { formatSpecErrors, specHash, type TPipelineSpec } from "@sluice/pipeline-spec";
import { connect } from "../connect";
import { loadSpecFile } from "../load-spec";

export async function validateCommand(
  file: string,
  opts: { againstRegistered?: boolean } = {},
): Promise<number> {
  const result = await loadSpecFile(file);
  if (!result.ok) {
    console.error(`${file}: ${result.errors.length} error(s)\n${formatSpecErrors(result.errors, file)}`);
    return 1;
  }
  console.log(
    `${file}: valid pipeline "${result.spec.name}" (spec hash ${specHash(result.spec).slice(0, 12)})`,
  );
  return opts.againstRegistered ? compareWithRegistered(result.spec) : 0;
}

/** Says what registering the spec would do to the registered pipeline's state; 1 when it would be refused. */
async function compareWithRegistered(spec: TPipelineSpec): Promise<number> {
  const services = await connect();
  try {
    const preview = await previewRegistration(services.pool, spec);
    if (preview.kind === "new-pipeline")
      console.log(`no pipeline named "${spec.name}" is registered: it would be version 1`);
    else if (preview.kind === "registered") console.log(`already registered as version ${preview.version}`);
    else if (preview.compatibility.compatible) {
      console.log(`a new version would continue version ${preview.previous}'s state`);
      if (preview.compatibility.notes.length > 0)
        console.log(`  note:\n${formatStateFindings(preview.compatibility.notes)}`);
    } else {
      console.error(
        `a new version cannot continue version ${preview.previous}'s state:\n${formatStateFindings(preview.compatibility.problems)}\n` +
          'run or start it with --fresh-state (see docs/engine.md, "A new version"), or revert the change',
      );
      return 1;
    }
    return 0;
  } catch (err) {
    console.error(`${spec.name}: cannot compare with the registered pipeline: ${(err as Error).message}`);
    return 2;
  } finally {
    await services.close();
  }
}
