// A lifecycle command on a pipeline by name: its latest version is the one the command applies to
// (as `sluice pause <name>` does). null when there is no such pipeline or it has no version.
import type { PrismaClient } from "@sluice/db";
import { findPipelineVersion } from "../pipelines/find-pipeline-version";
import { runPipelineCommand, type TBatchScheduler, type TRunCommandInput, type TRunCommandResult } from "./run-pipeline-command";

export async function commandPipeline(
  db: PrismaClient,
  input: Omit<TRunCommandInput, "pipelineVersionId"> & { pipeline: string },
  opts: { scheduler?: TBatchScheduler } = {},
): Promise<(TRunCommandResult & { version: number }) | null> {
  const latest = await findPipelineVersion(db, input.pipeline);
  if (!latest?.version) return null;
  const { pipeline: _name, ...command } = input;
  const result = await runPipelineCommand(db, { ...command, pipelineVersionId: latest.version.id }, opts);
  return { ...result, version: latest.version.version };
}
