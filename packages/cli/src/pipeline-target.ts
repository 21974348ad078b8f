// Which pipeline version a command names: `name` (the serving version), `name@2`, or
// `name --version 2`. A pipeline may have several versions running (one beside another with its own
// state and table), so commands that change something act on exactly the version named, never a guess.
// Pipeline names are slugs (no "@"), so the suffix cannot be part of a name.

export type TPipelineTarget = { name: string; version?: number } | { error: string };

const VERSION = /^[1-9]\d{0,8}$/;

export function parsePipelineTarget(target: string, versionOption?: string): TPipelineTarget {
  const at = target.lastIndexOf("@");
  const name = at === -1 ? target : target.slice(0, at);
  const suffix = at === -1 ? undefined : target.slice(at + 1);
  if (suffix !== undefined && !VERSION.test(suffix))
    return {
      error: `${target}: write the version as a number after "@", e.g. ${name || "payments-ledger"}@2`,
    };
  if (versionOption !== undefined && !VERSION.test(versionOption))
    return { error: `--version ${versionOption}: a version is a number from 1, e.g. --version 2` };
  if (suffix !== undefined && versionOption !== undefined && suffix !== versionOption)
    return { error: `${target} and --version ${versionOption} name different versions: give one` };
  if (!name) return { error: `${target}: name the pipeline before "@", e.g. payments-ledger@2` };
  const version = suffix ?? versionOption;
  return version === undefined ? { name } : { name, version: Number(version) };
}

/** How a command names a version in what it prints: `orders version 2`. */
export const versionLabel = (name: string, version: number) => `${name} version ${version}`;
