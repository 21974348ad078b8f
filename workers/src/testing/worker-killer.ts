// The chaos tests' killer: every 2–5 s (seeded) one of the workers is SIGKILLed and, 0.2–1.5 s later,
// a new one is started in its place, until stopped. Stopping lets the round in progress finish, so no
// worker is left dead; it returns how many were killed.
import { setTimeout as sleep } from "node:timers/promises";
import type { Prng } from "@sluice/producer";
import type { WorkerProcess } from "./worker-process";

export function startWorkerKiller(
  workers: WorkerProcess[],
  spawn: () => WorkerProcess,
  rng: Prng,
): { stop(): Promise<number> } {
  let killing = true;
  let kills = 0;
  const rounds = (async () => {
    while (killing) {
      await sleep(rng.int(2000, 5000));
      const i = rng.int(0, workers.length - 1);
      workers[i]!.child.kill("SIGKILL");
      await workers[i]!.exited;
      kills++;
      await sleep(rng.int(200, 1500));
      workers[i] = spawn();
    }
  })();
  return {
    async stop() {
      killing = false;
      await rounds;
      return kills;
    },
  };
}
