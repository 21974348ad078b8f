// A lifecycle command on a pipeline by name and version: the version the person is looking at (the
// console's `?v=N`, `sluice stop name@2`), else the serving one — the newest — as `sluice pause <name>`
// does. A pipeline may have several versions running (one beside another in its own table), so the
// command never guesses another version than the one named. null when there is no such pipeline, or
// no such version of it.
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
  input: Omit<TRunCommandInput, "pipelineVersionId"> & { pipeline: string; version?: number | undefined },
  opts: TRunCommandOptions = {},
): Promise<TRunCommandResult | null> {
  const found = await findPipelineVersion(db, input.pipeline, input.version);
  if (!found?.version) return null;
  const { pipeline: _name, version: _version, ...command } = input;
  const audit = opts.audit
    ? { ...opts.audit, target: { type: "pipeline", id: found.pipelineId, label: found.pipeline } }
    : undefined;
  return runPipelineCommand(
    db,
    { ...command, pipelineVersionId: found.version.id },
    { ...opts, ...(audit ? { audit } : {}) },
  );
}
