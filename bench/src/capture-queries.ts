// Records the statements a pool's connections send, when they match, with their parameters and how
// long each took — so a benchmark can EXPLAIN exactly the SQL the real code ran, with its values,
// instead of a copy of that SQL that could drift from it. Only connections the pool opens after this
// call are recorded: give it a pool of its own.
import type pg from "pg";

export interface TCapturedQuery {
  text: string;
  values: unknown[];
  ms: number;
}

export function captureQueries(pool: pg.Pool, wanted: (text: string) => boolean): TCapturedQuery[] {
  const captured: TCapturedQuery[] = [];
  pool.on("connect", (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const [text, values] = args;
      if (typeof text !== "string" || !wanted(text) || args.length > 2) return query(...args);
      const started = performance.now();
      return (query(...args) as Promise<unknown>).then((result) => {
        captured.push({
          text,
          values: (values as unknown[] | undefined) ?? [],
          ms: performance.now() - started,
        });
        return result;
      });
    }) as typeof client.query;
  });
  return captured;
}
