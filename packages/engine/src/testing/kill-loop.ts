// Runs `sluice run <spec> --until-caught-up` as a child process and SIGKILLs it again and again at
// seeded random moments — a random fraction of a typical batch after one of its progress lines, so
// kills land between plan and commit, during the read, inside the commit — then lets one run finish.
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { Prng } from "@sluice/producer";
import { PROGRESS_LINE, runSluice, spawnSluice, type SluiceProcess } from "./sluice-process";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export interface KillLoopResult {
  kills: number;
  /** The pipeline drained before all kills were done. */
  drainedEarly: boolean;
}

export async function runWithKills(
  file: string,
  databaseUrl: string,
  opts: { kills: number; seed: string },
): Promise<KillLoopResult> {
  const rng = Prng.from(opts.seed);
  const batchMs: number[] = [];
  let kills = 0;
  let drainedEarly = false;
  for (let round = 0; kills < opts.kills && round < opts.kills * 2; round++) {
    const child = spawnSluice(["run", file, "--until-caught-up"], { databaseUrl });
    const seen = await child.waitForLines(PROGRESS_LINE, rng.int(1, 3));
    // A typical batch, from each run's batches after its first (the first one also joins Kafka).
    for (const l of child.stdout.filter((line) => PROGRESS_LINE.test(line)).slice(1)) {
      const ms = / in (\d+) ms/.exec(l);
      if (ms) batchMs.push(Number(ms[1]));
    }
    if (seen)
      await Promise.race([
        sleep(Math.round(rng.next() * 1.2 * (median(batchMs.slice(-20)) || 100))),
        child.exited,
      ]);
    if (await killIfRunning(child)) {
      kills++;
      continue;
    }
    await expectCleanExit(child);
    drainedEarly = true;
    break;
  }
  await finishRun(file, databaseUrl);
  return { kills, drainedEarly };
}

/** SIGKILL the child if it is still running; true if it was killed. */
export async function killIfRunning(child: SluiceProcess): Promise<boolean> {
  if (child.child.exitCode !== null || child.child.signalCode !== null) return false;
  child.child.kill("SIGKILL");
  await child.exited;
  return true;
}

export async function expectCleanExit(child: SluiceProcess): Promise<void> {
  const { code } = await child.exited;
  expect({ code, stderr: child.stderr.slice(-5) }).toEqual({ code: 0, stderr: child.stderr.slice(-5) });
}

/** One uninterrupted run to the end of the backlog; it must exit 0, caught up. */
export async function finishRun(file: string, databaseUrl: string): Promise<void> {
  const final = await runSluice(["run", file, "--until-caught-up"], { databaseUrl });
  expect({ code: final.code, stderr: final.stderr.slice(-2000) }).toEqual({
    code: 0,
    stderr: final.stderr.slice(-2000),
  });
  expect(final.stdout).toContain("caught up");
}
