// One engine run as a whole process: spawned, timed from spawn to exit (start-up, reading, processing,
// writing and shutdown included), its peak memory from /usr/bin/time when present, its output kept
// in a log file (the last lines shown when it fails).
import { spawn } from "node:child_process";
import { existsSync, createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";

export interface ProcessRun {
  seconds: number;
  exitCode: number;
  /** Peak resident memory in MB, when /usr/bin/time measured it. */
  peakMb: number | undefined;
  log: string;
  /** The process's output (stdout and stderr), for lines a runner reads back. */
  output: string;
}

const TIME = "/usr/bin/time";

export async function timeProcess(
  command: string,
  args: string[],
  o: { cwd: string; env: NodeJS.ProcessEnv; log: string },
): Promise<ProcessRun> {
  const withTime = existsSync(TIME);
  const [cmd, argv] = withTime ? [TIME, ["-f", "PEAK_RSS_KB %M", command, ...args]] : [command, args];
  const log = createWriteStream(o.log);
  const started = performance.now();
  const child = spawn(cmd, argv, { cwd: o.cwd, env: o.env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const exitCode = await new Promise<number>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  const seconds = (performance.now() - started) / 1000;
  await new Promise<void>((resolve) => log.end(resolve));
  const output = await readFile(o.log, "utf8");
  const rss = /PEAK_RSS_KB (\d+)/.exec(output);
  return { seconds, exitCode, peakMb: rss ? Number(rss[1]) / 1024 : undefined, log: o.log, output };
}

/** The last lines of a failed run, for the error message. */
export function tail(output: string, lines = 15): string {
  return output.trimEnd().split("\n").slice(-lines).join("\n");
}
