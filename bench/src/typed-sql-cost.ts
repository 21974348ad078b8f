// What the typed SQL layer (@sluice/db typed-sql.ts: Kysely builds and compiles, Prisma runs) costs per
// statement against what it replaced, Prisma's tagged-template $queryRaw / $executeRaw, measured in the
// same run on a scratch database: a primary-key SELECT and a one-row UPDATE, each alternated round by
// round so drift on the machine hits both alike. Also reported: Kysely's build-and-compile alone, with no
// database. The ratio is the goal (≈ 1: the layer adds type checking, not time); absolute µs vary by machine.
//
//   npx tsx bench/src/typed-sql-cost.ts
import { loadEnv, ZServiceEnv } from "@sluice/config";
import { countOf, createPrismaClient, firstRowOf, sql, tables } from "@sluice/db";
import { median } from "./percentile";
import { createScratchDatabase } from "./scratch-database";

const ROUNDS = 7;
const PER_ROUND = 1_500;

const env = loadEnv(ZServiceEnv);
const scratch = await createScratchDatabase(env.DATABASE_URL);
const db = createPrismaClient(scratch.pool);
const id = "workers"; // the migration inserts the evaluator rows

const variants = {
  "select, tagged template": () =>
    db.$queryRaw<
      { epoch: bigint; owner: string | null }[]
    >`SELECT epoch, owner FROM alert_evaluators WHERE id = ${id}`,
  "select, typed layer": () =>
    firstRowOf(db, tables.selectFrom("alert_evaluators").select(["epoch", "owner"]).where("id", "=", id)),
  "update, tagged template": () =>
    db.$executeRaw`UPDATE alert_evaluators SET last_tick_at = now() WHERE id = ${id}`,
  "update, typed layer": () =>
    countOf(
      db,
      tables
        .updateTable("alert_evaluators")
        .set({ last_tick_at: sql`now()` })
        .where("id", "=", id),
    ),
};
type TVariant = keyof typeof variants;

async function microsPerStatement(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < PER_ROUND; i++) await run();
  return ((performance.now() - started) * 1000) / PER_ROUND;
}

function compileOnlyMicros(): number {
  const started = performance.now();
  for (let i = 0; i < PER_ROUND * 10; i++)
    tables
      .updateTable("alert_evaluators")
      .set({ last_tick_at: sql`now()` })
      .where("id", "=", id)
      .compile();
  return ((performance.now() - started) * 1000) / (PER_ROUND * 10);
}

try {
  for (const run of Object.values(variants)) await microsPerStatement(run); // warm up: connections, JIT
  const times = Object.fromEntries(Object.keys(variants).map((k) => [k, [] as number[]])) as Record<
    TVariant,
    number[]
  >;
  const compile: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, run] of Object.entries(variants))
      times[name as TVariant].push(await microsPerStatement(run));
    compile.push(compileOnlyMicros());
  }
  const m = (k: TVariant) => median(times[k]);
  for (const k of Object.keys(variants) as TVariant[])
    console.log(`${k}: median ${m(k).toFixed(1)} µs a statement`);
  console.log(`Kysely build + compile alone: median ${median(compile).toFixed(2)} µs a statement`);
  console.log(
    `ratio typed layer / tagged template: select ${(m("select, typed layer") / m("select, tagged template")).toFixed(2)}, update ${(m("update, typed layer") / m("update, tagged template")).toFixed(2)} (${ROUNDS} rounds of ${PER_ROUND})`,
  );
} finally {
  await db.$disconnect();
  await scratch.close();
}
