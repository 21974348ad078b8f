// A temporal join whose dimension is another Sluice pipeline's SCD2 history (join.dimension.pipeline),
// against an independent SQL recomputation. The dimension is a real CDC pipeline (scdType 2, sequenced
// by its event time) over a changelog on two partitions; the joining pipelines read payments on three.
// Step by step — the dimension's pipeline drained, its table copied aside, then the joining pipelines
// drained — payments arrive before, with and after their customers' versions; versions arrive out of
// order and split over partitions, one behind the dimension's watermark (dead-lettered there, so never
// in its table); payments are duplicated; some wait past waitFor (onMissing deadLetter and emit).
//
// The recomputation knows per step only: the dimension's watermark (slowest changelog partition's
// newest change − 1 minute, over what was produced by then), the payments' event time (slowest
// payment partition's newest), and the copy of the dimension's table taken at that step. A payment is
// decided at the first step where the dimension passed it or it waited 30 minutes, with the version
// its copy says was valid at its event time (valid_from ≤ t < valid_to). A version committed after a
// payment was decided must not change it (checked: the table's final version differs for some).
// Then one joining pipeline over the complete topics under SIGKILLs ends as an uninterrupted one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { Prng } from "@sluice/producer";
import { PipelineRunner } from "../runner/pipeline-runner";
import type { BatchProgress } from "../store/progress-record";
import { registerPipelineVersion } from "../store/register-version";
import { drainRunner, ledgerSpec } from "../testing/engine-fixture";
import {
  at,
  decidedSql,
  DIM_PARTITIONS,
  FACT_PARTITIONS,
  openJoinWorkload,
  sendPayments,
  storedJoin,
  WAIT_FOR_MINUTES,
  type JoinWorkload,
  type Payment,
} from "../testing/join-workload";
import { runWithKills } from "../testing/kill-loop";
import { DimensionPipelineError } from "./dimension-pipeline";

let w: JoinWorkload;

const DIM_PIPELINE = "customer-history";
const OWNER = "payments-data"; // ledgerSpec's owner: the dimension pipeline's team must be the joiner's

interface Change {
  change_id: string;
  customer_id: string;
  status: string;
  risk: number;
  op: "U" | "D";
  changed_at: Date;
  partition: number;
  phase: number;
}
type Fact = Payment & { phase: number };

const changes: Change[] = [];
const facts: Fact[] = [];
const rng = Prng.from("pipeline-dimension");
let counter = 0;

function change(customer: string, minutes: number, step: number, opts: Partial<Change> = {}): Change {
  const c: Change = {
    change_id: `c${++counter}`,
    customer_id: customer,
    status: `${customer}-s${counter}`,
    risk: rng.int(0, 100),
    op: "U",
    changed_at: at(minutes),
    partition: rng.int(0, DIM_PARTITIONS - 1),
    phase: step,
    ...opts,
  };
  changes.push(c);
  return c;
}

function fact(customer: string, minutes: number, step: number, partition = rng.int(0, FACT_PARTITIONS - 1)) {
  facts.push({
    event_id: `e${++counter}`,
    customer_id: customer,
    event_time: at(minutes),
    partition,
    phase: step,
  });
}

/** Every partition of the changelog (and of the payments) reaches `minutes`, with filler rows. */
function advance(step: number, dimMinutes: number | undefined, factMinutes?: number) {
  if (dimMinutes !== undefined)
    for (let p = 0; p < DIM_PARTITIONS; p++) change(`filler-${p}`, dimMinutes, step, { partition: p });
  if (factMinutes !== undefined)
    for (let p = 0; p < FACT_PARTITIONS; p++) fact("filler-0", factMinutes, step, p);
}

function plan() {
  // Step 1 — the dimension reaches +20m (watermark +19m). A's versions arrive with A's payments, out of
  // order and over both partitions; A4 is deleted at +15m. A's payments up to +29m: those before +19m
  // join, the rest wait. B's payments at [+20m, +28m] arrive before any B version: they wait.
  for (const c of ["a1", "a2", "a3", "a4"]) {
    change(c, -60, 1);
    for (let i = 0; i < 3; i++) change(c, rng.int(-50, c === "a4" ? 14 : 18), 1);
  }
  change("a4", 15, 1, { op: "D", status: "a4-closed" });
  for (let i = 0; i < 40; i++) fact(`a${rng.int(1, 4)}`, rng.int(0, 29), 1);
  for (let i = 0; i < 10; i++) fact(`b${rng.int(1, 2)}`, rng.int(20, 28), 1);
  fact("nobody", 5, 1); // no version ever: missing once the dimension passes it
  advance(1, 20, 29); // payments +29m: none has waited 30 minutes yet

  // Step 2 — B's versions arrive after their payments (within waitFor: the waiting rows join); an
  // A1 version at +25m arrives out of order but ahead of the watermark (A1's waiting rows after it
  // join with it); one at +2m arrives behind the watermark: the dimension's pipeline dead-letters it
  // (late), so it never becomes a version. C's versions come before its payments (next step).
  for (const c of ["b1", "b2"]) {
    change(c, 20, 2);
    change(c, rng.int(21, 27), 2);
  }
  change("a1", 25, 2, { status: "a1-out-of-order" });
  change("a1", 2, 2, { status: "a1-too-late" });
  for (const c of ["c1", "c2"]) for (let i = 0; i < 2; i++) change(c, rng.int(30, 50), 2);
  advance(2, 60); // dimension watermark +59m
  for (let i = 0; i < 10; i++) fact(`a${rng.int(1, 3)}`, rng.int(36, 58), 2);
  advance(2, undefined, 58);

  // Step 3 — C's payments after its versions (joined at once); D and E payments the dimension will
  // not pass: the dimension creeps to +62m (watermark +61m) while payments run on to +110m, so rows at
  // or before +80m waited 30 minutes: E (a version at +62m, known) joins at the bound, D (none) is missing.
  for (let i = 0; i < 8; i++) fact(`c${rng.int(1, 2)}`, rng.int(50, 59), 3);
  change("e1", 62, 3, { status: "e1-first" });
  advance(3, 62);
  for (let i = 0; i < 4; i++) fact("d1", rng.int(63, 70), 3);
  for (let i = 0; i < 4; i++) fact("e1", rng.int(65, 70), 3);
  advance(3, undefined, 110);

  // Step 4 — E1's next version at +64m is committed after its payments were emitted at the bound with
  // e1-first: they keep it (never re-emitted); a payment duplicated from step 1 is a duplicate.
  change("e1", 64, 4, { status: "e1-second" });
  advance(4, 65);
  const again = facts.find((f) => f.customer_id === "a2" && f.phase === 1)!;
  facts.push({ ...again, phase: 4, partition: (again.partition + 1) % FACT_PARTITIONS });
}

async function produce(step: number) {
  const shuffled = changes.filter((c) => c.phase === step).sort(() => rng.next() - 0.5);
  if (shuffled.length > 0)
    await w.producer.send({
      topic: w.dimTopic,
      messages: shuffled.map(({ partition, phase: _p, ...c }) => ({
        partition,
        key: c.customer_id,
        value: JSON.stringify({ ...c, changed_at: c.changed_at.toISOString() }),
      })),
    });
  await sendPayments(
    w,
    facts.filter((f) => f.phase === step),
    rng,
  );
}

// ── The specs ────────────────────────────────────────────────────────────────────────────────────

function dimensionSpec(): TPipelineSpec {
  const result = validateSpec({
    name: DIM_PIPELINE,
    owner: OWNER,
    source: { kafka: { topic: w.dimTopic, startingOffsets: "earliest", maxOffsetsPerTrigger: 10_000 } },
    format: "json",
    contract: {
      fields: {
        change_id: "string",
        customer_id: "string",
        status: "string",
        risk: "int",
        op: "string",
        changed_at: "timestamp",
      },
    },
    eventTime: { column: "changed_at", watermarkDelay: "1m", idleTimeout: "6h" },
    dedupe: { key: ["change_id"], within: "watermark" },
    cdc: { key: ["customer_id"], sequenceBy: "changed_at", deleteWhen: "op == 'D'", scdType: 2 },
    lateData: "deadLetter",
    sink: { postgres: { table: "customer_history" } },
  });
  if (!result.ok) throw new Error(`bad dimension spec: ${JSON.stringify(result.errors)}`);
  return result.spec;
}

function joinSpec(
  name: string,
  table: string,
  opts: { perBatch?: number; onMissing?: "deadLetter" | "emit"; dimension?: Record<string, unknown> } = {},
): TPipelineSpec {
  const result = validateSpec({
    ...ledgerSpec(w.fx.topic, {}),
    name,
    source: {
      kafka: { topic: w.fx.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: opts.perBatch ?? 45 },
    },
    eventTime: { column: "event_time", watermarkDelay: "48h", idleTimeout: "6h" },
    join: {
      dimension: opts.dimension ?? {
        pipeline: DIM_PIPELINE,
        key: ["customer_id"],
        contract: { fields: { customer_id: "string", status: "string", risk: "int" } },
      },
      on: { customer_id: "customer_id" },
      fields: { customer_status: "status", customer_risk: "risk" },
      waitFor: `${WAIT_FOR_MINUTES}m`,
      onMissing: opts.onMissing ?? "deadLetter",
    },
    sink: { postgres: { table } },
  });
  if (!result.ok) throw new Error(`bad join spec: ${JSON.stringify(result.errors)}`);
  return result.spec;
}

// ── The recomputation ────────────────────────────────────────────────────────────────────────────

async function loadReference() {
  await w.fx.pool.query(`CREATE TABLE ref_changes (changed_at timestamptz, partition int, phase int)`);
  await w.fx.pool.query(
    `CREATE TABLE ref_facts (event_id text, customer_id text, event_time timestamptz, partition int, phase int)`,
  );
  await w.fx.pool.query(
    `CREATE TABLE ref_dim (step int, customer_id text, status text, risk int, valid_from timestamptz, valid_to timestamptz)`,
  );
  for (const c of changes)
    await w.fx.pool.query(`INSERT INTO ref_changes VALUES ($1, $2, $3)`, [
      c.changed_at,
      c.partition,
      c.phase,
    ]);
  for (const f of facts)
    await w.fx.pool.query(`INSERT INTO ref_facts VALUES ($1, $2, $3, $4, $5)`, [
      f.event_id,
      f.customer_id,
      f.event_time,
      f.partition,
      f.phase,
    ]);
}

/** The dimension's table as its readers see it (the serving view), copied aside as of `step`. */
async function copyDimension(step: number) {
  await w.fx.pool.query(
    `INSERT INTO ref_dim SELECT $1, customer_id, status, risk, valid_from, valid_to FROM customer_history`,
    [step],
  );
}

type TJoined = { event_id: string; status: string | null; risk: number | null };

/** `stepOf`: `phase` (the step a row was produced in), or `4` when everything was produced (and the dimension drained) before the run. */
async function recompute(stepOf: "phase" | "4") {
  const res = await w.fx.pool.query<TJoined & { fate: "joined" | "missing" | "waiting" }>(
    `WITH ${decidedSql(stepOf, 4)}
     SELECT d.event_id,
            CASE WHEN d.decided_in IS NULL THEN 'waiting' WHEN v.status IS NULL THEN 'missing' ELSE 'joined' END AS fate,
            v.status, v.risk
       FROM decided d
       LEFT JOIN ref_dim v ON v.step = d.decided_in AND v.customer_id = d.customer_id
                          AND v.valid_from <= d.event_time AND (v.valid_to IS NULL OR v.valid_to > d.event_time)
      ORDER BY d.event_id`,
  );
  const by = (fate: string) => res.rows.filter((r) => r.fate === fate);
  return {
    joined: by("joined").map(({ event_id, status, risk }) => ({ event_id, status, risk })),
    missing: by("missing").map((r) => r.event_id),
    waiting: by("waiting").map((r) => r.event_id),
  };
}

const stored = (table: string, pipelineVersionId: string) =>
  storedJoin<TJoined>(
    w,
    `SELECT event_id, customer_status AS status, customer_risk::int AS risk FROM ${table}`,
    pipelineVersionId,
  );

const sorted = (xs: string[]) => [...xs].sort();

async function drain(spec: TPipelineSpec, pipelineVersionId: string) {
  return drainRunner(await PipelineRunner.open(w.fx.resources, { pipelineVersionId, spec, owner: "test" }));
}

beforeAll(async () => {
  w = await openJoinWorkload("dim-pipeline");
  plan();
  await loadReference();
});
afterAll(async () => {
  await w?.close();
});

describe("temporal join with another pipeline's SCD2 history", () => {
  it("registration refuses a dimension pipeline that is unknown, not SCD2 by event time, another team's, or lacks the columns", async () => {
    const refused = async (spec: TPipelineSpec) => {
      const err = await registerPipelineVersion(w.fx.pool, spec).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DimensionPipelineError);
      return (err as Error).message;
    };
    const dim = (over: Record<string, unknown>) => ({
      pipeline: DIM_PIPELINE,
      key: ["customer_id"],
      contract: { fields: { customer_id: "string", status: "string", risk: "int" } },
      ...over,
    });
    expect(
      await refused(joinSpec("j-unknown", "j_unknown", { dimension: dim({ pipeline: "no-such" }) })),
    ).toMatch(/no pipeline of that name is registered/);
    // Not SCD2: the plain ledger pipeline; SCD2 sequenced by a version number instead of time.
    await registerPipelineVersion(
      w.fx.pool,
      ledgerSpec(w.fx.topic, { name: "plain-ledger", sink: { postgres: { table: "plain_ledger" } } }),
    );
    expect(
      await refused(joinSpec("j-plain", "j_plain", { dimension: dim({ pipeline: "plain-ledger" }) })),
    ).toMatch(/does not keep SCD2 history/);
    const byVersion = validateSpec({
      ...dimensionSpec(),
      name: "by-version",
      contract: { fields: { ...dimensionSpec().contract.fields, version: "int" } },
      cdc: { key: ["customer_id"], sequenceBy: "version", scdType: 2 },
      sink: { postgres: { table: "by_version" } },
    });
    if (!byVersion.ok) throw new Error(JSON.stringify(byVersion.errors));
    await registerPipelineVersion(w.fx.pool, byVersion.spec);
    expect(await refused(joinSpec("j-ver", "j_ver", { dimension: dim({ pipeline: "by-version" }) }))).toMatch(
      /sequenced by version, not by its event time changed_at/,
    );
    await registerPipelineVersion(w.fx.pool, dimensionSpec());
    expect(
      await refused(
        joinSpec("j-cols", "j_cols", {
          dimension: dim({
            contract: { fields: { customer_id: "string", status: "string", tier: "string", risk: "string" } },
          }),
        }),
      ),
    ).toMatch(/has no column tier .*; risk is int in its table, not string/);
    expect(await refused({ ...joinSpec("j-team", "j_team"), owner: "fraud" })).toMatch(
      /belongs to team payments-data, and j-team to fraud: .*same team/,
    );
    const version = await w.fx.pool.query(
      `SELECT 1 FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name LIKE 'j-%'`,
    );
    expect(version.rows).toEqual([]);
  });

  it(
    "every row carries the version its dimension pipeline had committed for its event time, decided once; rows past waitFor are dead-lettered or emitted",
    { timeout: 240_000 },
    async () => {
      const dimSpec = dimensionSpec();
      const { pipelineVersionId: dimVersion } = await registerPipelineVersion(w.fx.pool, dimSpec);
      const deadLettering = joinSpec("joined-dl", "joined_dl");
      const emitting = joinSpec("joined-emit", "joined_emit", { onMissing: "emit" });
      const dl = await registerPipelineVersion(w.fx.pool, deadLettering);
      const em = await registerPipelineVersion(w.fx.pool, emitting);
      const recorded = await w.fx.pool.query<{ name: string }>(
        `SELECT d.name FROM pipeline_versions v JOIN pipelines d ON d.id = v.dimension_pipeline_id WHERE v.id = $1`,
        [dl.pipelineVersionId],
      );
      expect(recorded.rows).toEqual([{ name: DIM_PIPELINE }]);
      const progress: BatchProgress[] = [];
      for (const step of [1, 2, 3, 4]) {
        await produce(step);
        if (step === 1) {
          // Read before the dimension's pipeline ran at all (as if paused): every payment waits.
          await drain(deadLettering, dl.pipelineVersionId);
          const early = await stored("joined_dl", dl.pipelineVersionId);
          expect([early.joined, early.missing]).toEqual([[], []]);
          expect(early.waiting.length).toBe(
            new Set(facts.filter((f) => f.phase === 1).map((f) => f.event_id)).size,
          );
        }
        await drain(dimSpec, dimVersion);
        await copyDimension(step);
        progress.push(...(await drain(deadLettering, dl.pipelineVersionId)));
        await drain(emitting, em.pipelineVersionId);
        // Step 1's payments were all read before: a batch ran because the dimension committed past them.
        if (step === 1)
          expect((await stored("joined_dl", dl.pipelineVersionId)).joined.length).toBeGreaterThan(20);
      }
      const expected = await recompute("phase");
      const got = await stored("joined_dl", dl.pipelineVersionId);

      // The workload reached every case it is about.
      expect(expected.joined.length).toBeGreaterThan(50);
      expect(expected.missing.length).toBeGreaterThanOrEqual(5);
      expect(expected.waiting.length).toBeGreaterThan(0);
      expect(expected.joined.some((r) => r.status === "a1-out-of-order")).toBe(true);
      expect(expected.joined.some((r) => r.status === "a1-too-late")).toBe(false);

      expect(got.joined).toEqual(expected.joined);
      expect(got.missing).toEqual(expected.missing);
      expect(got.waiting).toEqual(sorted(expected.waiting));

      // onMissing: emit — the same rows, the missing ones emitted with the fields null.
      const emitted = await stored("joined_emit", em.pipelineVersionId);
      const withNulls = [
        ...expected.joined,
        ...expected.missing.map((event_id) => ({ event_id, status: null, risk: null })),
      ].sort((a, b) => (a.event_id < b.event_id ? -1 : 1));
      expect(emitted.joined).toEqual(withNulls);
      expect(emitted.missing).toEqual([]);

      // The progress record counts them as the changelog join does.
      const sum = (k: string) => progress.reduce((n, p) => n + Number(p.join?.[k] ?? 0), 0);
      expect(sum("joinedAtBound")).toBeGreaterThan(0);
      expect(sum("joined") + sum("joinedAtBound")).toBe(expected.joined.length);
      expect(sum("deadLettered")).toBe(expected.missing.length);
      expect(progress.at(-1)!.join?.waiting).toBe(expected.waiting.length);

      // A version committed after rows were emitted at the bound: they keep the one they were joined
      // with, though the dimension's table now says otherwise for their time.
      const rewritten = await w.fx.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM joined_dl j JOIN customer_history h ON h.customer_id = j.customer_id
           AND h.valid_from <= j.event_time AND (h.valid_to IS NULL OR h.valid_to > j.event_time)
          WHERE j.customer_status = 'e1-first' AND h.status = 'e1-second'`,
      );
      expect(rewritten.rows[0]!.n).toBeGreaterThan(0);
    },
  );

  it(
    "over the complete topics, a joining pipeline SIGKILLed at random moments ends exactly as an uninterrupted one, and both match the recomputation",
    { timeout: 300_000 },
    async () => {
      // The dimension's pipeline has drained everything (the previous test): its table as copied at step 4.
      const whole = joinSpec("joined-whole", "joined_whole", { perBatch: 8 });
      const { pipelineVersionId } = await registerPipelineVersion(w.fx.pool, whole);
      await drain(whole, pipelineVersionId);
      const expected = await recompute("4");
      const uninterrupted = await stored("joined_whole", pipelineVersionId);
      expect(uninterrupted.joined).toEqual(expected.joined);
      expect(uninterrupted.missing).toEqual(expected.missing);
      expect(uninterrupted.waiting).toEqual(sorted(expected.waiting));

      const killedSpec = joinSpec("joined-killed", "joined_killed", { perBatch: 8 });
      const file = await w.specs.write("joined-killed", killedSpec as unknown as Record<string, unknown>);
      const { kills } = await runWithKills(file, w.fx.db.url, { kills: 5, seed: "dim-pipeline-kills" });
      expect(kills).toBeGreaterThanOrEqual(3);
      const [killedVersion] = (
        await w.fx.pool.query<{ id: string }>(
          `SELECT v.id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = 'joined-killed'`,
        )
      ).rows;
      const killed = await stored("joined_killed", killedVersion!.id);
      expect(killed).toEqual(uninterrupted);
    },
  );
});
