// CPU time spent, as a second measure next to wall-clock rates: on a shared 2-core machine other
// processes' load moves the rates from run to run, while CPU milliseconds per message move much less.
// Postgres CPU is read from /proc for the benchmark database's backends, so it is only reported when
// Postgres runs on this machine.
import { readFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import type pg from "pg";

const CLOCK_TICKS_PER_SECOND = 100;

export function nodeCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Total CPU of this database's server backends, or null when they are not visible in /proc. */
export async function postgresCpuMs(pool: pg.Pool): Promise<number | null> {
  const res = await pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`,
  );
  let ticks = 0;
  for (const { pid } of res.rows) {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // After "pid (comm) ", utime and stime are the 12th and 13th fields.
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      return null;
    }
  }
  return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
}

/**
 * What the measured CPU per message allows at best on this machine: all the CPU the run used (Node,
 * its helper threads included, and Postgres) spread perfectly over every core, never waiting. A hard
 * bound — Kafka's broker and other load only take cores away. Printed so a ratio can be read against
 * what is reachable here, not only against the target.
 */
export function cpuBound(nodeUs: number, pgUs: number, rawRate: number): string {
  const cores = availableParallelism();
  const best = Math.round((1e6 * cores) / (nodeUs + pgUs));
  return `bound from CPU per message (node + postgres over ${cores} cores): ≤ ${best.toLocaleString("en-US")} msg/s = ratio ≤ ${(best / rawRate).toFixed(2)}`;
}
