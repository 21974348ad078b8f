// What registering a spec did, in words, for `sluice run` and `sluice start`: the version, whether it
// continues the previous version's state or starts with fresh state (and whether the previous version
// keeps running beside it), and the notes of changes whose guarantee holds in full only after a while.
import { formatStateFindings, type RegisteredVersion } from "@sluice/engine";

/** The --flag that registers a changed spec with fresh state instead of continuing the previous version's. */
export const FRESH_STATE_FLAG = "fresh-state";

export function describeRegistration(name: string, reg: RegisteredVersion): string[] {
  const how = !reg.created
    ? "resuming"
    : reg.continuedFrom
      ? `registered (continues from version ${reg.continuedFrom.version})`
      : "registered";
  const lines = [`${name} version ${reg.version} ${how} [${reg.pipelineVersionId}]`];
  if (reg.created && !reg.continuedFrom && reg.version > 1) {
    lines.push(
      reg.replaced
        ? `  fresh state: it rebuilds the table of version ${reg.replaced.version}, which is fenced and stops`
        : `  fresh state: version ${reg.version - 1} keeps its own state and table and, if it runs, keeps running beside it (the fleet shows both); stop it with npx sluice stop ${name}@${reg.version - 1}`,
    );
  }
  if (reg.notes) lines.push("  continued, but note:", formatStateFindings(reg.notes));
  return lines;
}
