// Partition groups killed together: one `sluice run --until-caught-up --group g` process per group,
// all SIGKILLed at a random moment once each has committed a batch — so their batches are in every
// phase at once, commits included — round after round; then every group drained to the end.
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import type { Prng } from "@sluice/producer";
import { PROGRESS_LINE, runSluice, spawnSluice, type SluiceEnv, type SluiceProcess } from "./sluice-process";

export async function killGroupsRepeatedly(o: {
  /** The spec file, with source.kafka.parallelism = `groups`. */
  file: string;
  env: SluiceEnv;
  groups: number;
  rounds: number;
  rng: Prng;
}): Promise<{ kills: number; killedWhileOthersRan: number }> {
  const all = Array.from({ length: o.groups }, (_, g) => g);
  const args = (g: number) => ["run", o.file, "--until-caught-up", "--group", String(g)];
  const running = (p: SluiceProcess) => p.child.exitCode === null && p.child.signalCode === null;
  let kills = 0;
  let killedWhileOthersRan = 0;
  for (let round = 0; round < o.rounds; round++) {
    const procs = all.map((g) => spawnSluice(args(g), o.env));
    await Promise.all(procs.map((p) => p.waitForLines(PROGRESS_LINE, 1)));
    await sleep(Math.round(o.rng.next() * 1_500));
    const alive = procs.filter(running);
    if (alive.length > 1) killedWhileOthersRan++;
    for (const p of alive) p.child.kill("SIGKILL");
    kills += alive.length;
    await Promise.all(procs.map((p) => p.exited));
  }
  const finals = await Promise.all(all.map((g) => runSluice(args(g), o.env)));
  for (const f of finals)
    expect({ code: f.code, stderr: f.stderr.slice(-1000) }).toEqual({
      code: 0,
      stderr: f.stderr.slice(-1000),
    });
  return { kills, killedWhileOthersRan };
}
