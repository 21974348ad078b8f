// One engine run as a whole process: spawned, timed from spawn to exit (start-up, reading, processing,
// writing and shutdown included), its peak memory and CPU time from /usr/bin/time when present, the
// whole machine's CPU time over the run (/proc/stat: the engine, Postgres, Kafka's broker and anything
// else), its output kept in a log file (the last lines shown when it fails).
import { spawn } from "node:child_process";
import { existsSync, createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";

export interface ProcessRun {
  seconds: number;
  exitCode: number;
  /** Peak resident memory in MB, when /usr/bin/time measured it. */
  peakMb: number | undefined;
  /** CPU seconds (user + system) of the process and its children, when /usr/bin/time measured it. */
  processCpuSeconds?: number | undefined;
  /** CPU seconds every process on the machine used while it ran (undefined without /proc/stat). */
  machineCpuSeconds?: number | undefined;
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
  const [cmd, argv] = withTime
    ? [TIME, ["-f", "PEAK_RSS_KB %M CPU_SECONDS %U %S", command, ...args]]
    : [command, args];
  const machineBefore = await machineBusySeconds();
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
  const machineAfter = await machineBusySeconds();
  await new Promise<void>((resolve) => log.end(resolve));
  const output = await readFile(o.log, "utf8");
  const time = /PEAK_RSS_KB (\d+) CPU_SECONDS ([\d.]+) ([\d.]+)/.exec(output);
  return {
    seconds,
    exitCode,
    peakMb: time ? Number(time[1]) / 1024 : undefined,
    processCpuSeconds: time ? Number(time[2]) + Number(time[3]) : undefined,
    machineCpuSeconds:
      machineBefore !== undefined && machineAfter !== undefined ? machineAfter - machineBefore : undefined,
    log: o.log,
    output,
  };
}

/** USER_HZ: /proc/stat counts in hundredths of a second on Linux. */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds the whole machine has been busy since boot: user, nice, system, irq and softirq of
 * /proc/stat's first line (not idle, iowait, or steal — time the hypervisor gave to other guests).
 */
export async function machineBusySeconds(): Promise<number | undefined> {
  try {
    const [first] = (await readFile("/proc/stat", "utf8")).split("\n");
    const [user, nice, system, , , irq, softirq] = first!.trim().split(/\s+/).slice(1).map(Number);
    return (user! + nice! + system! + irq! + softirq!) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** The last lines of a failed run, for the error message. */
export function tail(output: string, lines = 15): string {
  return output.trimEnd().split("\n").slice(-lines).join("\n");
}
