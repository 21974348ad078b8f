// Readers of a serving name while it is switched, for the rollout benchmark: each on a connection of
// its own, querying in a tight loop and recording when each read started and completed and what it
// returned; and what a reader saw of a switch — the longest gap between consecutive completed reads
// that spans it (the pause a reader noticed), against the gaps between reads outside any switch.
import pg from "pg";

export interface TRead<R> {
  started: number;
  ended: number;
  row: R;
}

/** When a switch ran: from before its transaction began until its commit returned (performance.now()). */
export interface TSwitchWindow {
  begin: number;
  end: number;
}

export interface TReader<R> {
  /** Stops after the read in flight; every read, or the first error a read met. */
  stop(): Promise<TRead<R>[]>;
}

export async function startReader<R extends pg.QueryResultRow>(
  url: string,
  sql: string,
  values: unknown[] = [],
): Promise<TReader<R>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const reads: TRead<R>[] = [];
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const started = performance.now();
      const row = (await client.query<R>(sql, values)).rows[0]!;
      reads.push({ started, ended: performance.now(), row });
    }
  })();
  // A failed read ends the loop; stop() reports it (handled here so it never goes unhandled meanwhile).
  loop.catch(() => undefined);
  return {
    async stop() {
      stopping = true;
      try {
        await loop;
      } finally {
        await client.end();
      }
      return reads;
    },
  };
}

export interface TReaderGaps {
  /** Per switch, the longest gap between consecutive completed reads that overlaps it (ms). */
  pauses: number[];
  /** Every gap that overlaps no switch (ms): the reader's pace. */
  outside: number[];
}

export function readerGaps(reads: TRead<unknown>[], switches: TSwitchWindow[]): TReaderGaps {
  const pauses = switches.map(() => 0);
  const outside: number[] = [];
  for (let i = 1; i < reads.length; i++) {
    const from = reads[i - 1]!.ended;
    const to = reads[i]!.ended;
    let spans = false;
    switches.forEach((w, k) => {
      if (from < w.end && to > w.begin) {
        spans = true;
        pauses[k] = Math.max(pauses[k]!, to - from);
      }
    });
    if (!spans) outside.push(to - from);
  }
  return { pauses, outside };
}

/**
 * Which switch's outcome a read must show: the index of the last switch that had committed before
 * the read started (−1: none yet), or null when the read overlapped a switch (either side is right).
 */
export function settledAfter(read: TRead<unknown>, switches: TSwitchWindow[]): number | null {
  let last = -1;
  for (const [k, w] of switches.entries()) {
    if (w.end < read.started) last = k;
    else if (w.begin < read.ended) return null;
    else break;
  }
  return last;
}
