// A lifecycle command on a pipeline by name: its latest version is the one the command applies to
// (as `sluice pause <name>` does). null when there is no such pipeline or it has no version.
import type { PrismaClient } from "@sluice/db";
import { findPipelineVersion } from "../pipelines/find-pipeline-version";
import {
  runPipelineCommand,
  type TRunCommandInput,
  type TRunCommandOptions,
  type TRunCommandResult,
} from "./run-pipeline-command";

export async function commandPipeline(
  db: PrismaClient,
  input: Omit<TRunCommandInput, "pipelineVersionId"> & { pipeline: string },
  opts: TRunCommandOptions = {},
): Promise<(TRunCommandResult & { version: number }) | null> {
  const latest = await findPipelineVersion(db, input.pipeline);
  if (!latest?.version) return null;
  const { pipeline: _name, ...command } = input;
  const audit = opts.audit
    ? { ...opts.audit, target: { type: "pipeline", id: latest.pipelineId, label: latest.pipeline } }
    : undefined;
  const result = await runPipelineCommand(
    db,
    { ...command, pipelineVersionId: latest.version.id },
    { ...opts, ...(audit ? { audit } : {}) },
  );
  return { ...result, version: latest.version.version };
}
