// The event-time temporal join against an independent SQL recomputation (issue #23 "Prove it").
// Payments are joined with a customer changelog read by the same pipeline: versions out of order and
// split across the changelog's two partitions, exact repeats, a tie on the same instant broken by the
// sequence, a delete, malformed changes, and payments duplicated and shuffled over three partitions.
// The data arrives in phases, the pipeline drained after each, so every kind of arrival happens:
// dimension versions before their payments, with them, after them but within `waitFor` (held, then
// joined), never (dead-lettered `dimension_missing` once the dimension passed them, or at the bound), a
// version known but never confirmed (joined at the bound), and a version arriving after rows it would
// have changed were emitted (those rows keep what they were joined with; later rows use it).
//
// The recomputation knows only what was produced in which phase: per phase the dimension's watermark
// (slowest changelog partition's newest change − 1 minute) and the payments' event time (slowest
// payment partition's newest), so a payment is decided in the first phase where the dimension passed
// it or it waited 30 minutes of event time, with the versions produced by then. Every stored row must
// carry exactly that version, every other payment be a `dimension_missing` dead letter or still waiting.
//
// Then the same join over the complete topics twice — once uninterrupted, once under SIGKILLs at
// random moments (in the read, between plan and commit, inside the commit) — ends in the same rows,
// dead letters and waiting rows, matching the recomputation with everything known at once.
import type { Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { Prng } from "@sluice/producer";
import { PipelineRunner } from "../runner/pipeline-runner";
import type { BatchProgress } from "../store/progress-record";
import { registerPipelineVersion } from "../store/register-version";
import { drainRunner, ledgerSpec, type EngineFixture } from "../testing/engine-fixture";
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
import { killGroupsRepeatedly } from "../testing/group-kills";
import { runWithKills } from "../testing/kill-loop";
import { runSluice } from "../testing/sluice-process";

let w: JoinWorkload;
let fx: EngineFixture;
let producer: Producer;
let dimTopic: string;

interface Change {
  customer_id: string;
  status: string;
  risk: number;
  op: "U" | "D";
  changed_at: Date;
  version: number;
  partition: number;
  phase: number;
}
type Fact = Payment & { phase: number };

const changes: Change[] = [];
const facts: Fact[] = [];
const rng = Prng.from("temporal-join");

/** `perBatch`: payments per batch (the dimension is always read to its end); `parallelism`: partition groups. */
function joinSpec(name: string, table: string, perBatch = 45, parallelism?: number): TPipelineSpec {
  const base = ledgerSpec(fx.topic, {});
  const result = validateSpec({
    ...base,
    name,
    source: {
      kafka: {
        topic: fx.topic,
        startingOffsets: "earliest",
        maxOffsetsPerTrigger: perBatch,
        ...(parallelism ? { parallelism } : {}),
      },
    },
    // Processing-time idleness would let a slow run's quiet partitions stop holding time back: the
    // phases are about event time only.
    eventTime: { column: "event_time", watermarkDelay: "48h", idleTimeout: "6h" },
    join: {
      dimension: {
        kafka: { topic: dimTopic, startingOffsets: "earliest", maxOffsetsPerTrigger: 100_000 },
        contract: {
          fields: {
            customer_id: "string",
            status: "string",
            risk: "int",
            op: "string",
            changed_at: "timestamp",
            version: "int",
          },
        },
        key: ["customer_id"],
        eventTime: { column: "changed_at", watermarkDelay: "1m", idleTimeout: "6h" },
        sequenceBy: "version",
        deleteWhen: "op == 'D'",
      },
      on: { customer_id: "customer_id" },
      fields: { customer_status: "status", customer_risk: "risk", customer_version: "version" },
      waitFor: `${WAIT_FOR_MINUTES}m`,
      onMissing: "deadLetter",
    },
    sink: { postgres: { table } },
  });
  if (!result.ok) throw new Error(`bad join spec: ${JSON.stringify(result.errors)}`);
  return result.spec;
}

// ── What is produced, phase by phase ─────────────────────────────────────────────────────────────

let versionCounter = 0;
function change(customer: string, minutes: number, phase: number, opts: Partial<Change> = {}): Change {
  const c: Change = {
    customer_id: customer,
    status: `${customer}-s${++versionCounter}`,
    risk: rng.int(0, 100),
    op: "U",
    changed_at: at(minutes),
    version: versionCounter,
    partition: rng.int(0, DIM_PARTITIONS - 1),
    phase,
    ...opts,
  };
  changes.push(c);
  return c;
}

let factCounter = 0;
function fact(
  customer: string,
  minutes: number,
  phase: number,
  partition = rng.int(0, FACT_PARTITIONS - 1),
): Fact {
  const f: Fact = {
    event_id: `e${++factCounter}`,
    customer_id: customer,
    event_time: at(minutes),
    partition,
    phase,
  };
  facts.push(f);
  return f;
}

/** Every partition of both topics reaches `minutes` (a filler customer no payment uses). */
function advance(phase: number, dimMinutes: number, factMinutes?: number) {
  for (let p = 0; p < DIM_PARTITIONS; p++) change(`filler-${p}`, dimMinutes, phase, { partition: p });
  if (factMinutes !== undefined)
    for (let p = 0; p < FACT_PARTITIONS; p++) fact("filler-0", factMinutes, phase, p);
}

function plan() {
  // Phase 1 — dimension before the payments. A: several versions each, out of order, spread over both
  // changelog partitions; A1 has two versions at the same instant (the higher sequence wins); A5 is
  // deleted at +20m; A6's first version is at +15m (earlier payments find none).
  for (const c of ["a1", "a2", "a3", "a4", "a5", "a6"]) {
    if (c !== "a6") change(c, -120, 1);
    // A1's other versions before the tie, A5's before its delete: the payments after them show both.
    const latest = c === "a1" ? 0 : c === "a5" ? 19 : 38;
    for (let i = 0; i < 3; i++) change(c, rng.int(c === "a6" ? 15 : -60, latest), 1);
  }
  const tie = change("a1", 12, 1);
  change("a1", 12, 1, { version: tie.version + 1000, status: "a1-tie-winner" });
  change("a5", 20, 1, { op: "D", status: "a5-closed" });
  change("a6", 15, 1);
  advance(1, 40); // dimension watermark +39m
  // A's payments over [0, +50m]: those before +39m join at once, the rest wait for the dimension.
  for (let i = 0; i < 70; i++) fact(`a${rng.int(1, 6)}`, rng.int(0, 50), 1);
  fact("a1", 6, 1); // joined before A1's late change at +5m arrives: keeps the version it got
  fact("a1", 8, 1);
  // B's payments at [+40m, +50m]: no B version yet, and the dimension has not passed them: they wait.
  for (let i = 0; i < 12; i++) fact(`b${rng.int(1, 3)}`, rng.int(40, 50), 1);
  // A payment whose customer never appears, behind the dimension's watermark: missing at once.
  fact("nobody", 10, 1);
  advance(1, 40, 50); // payment time +50m on every partition

  // Phase 2 — B's versions arrive (after their payments, within waitFor: the waiting rows join);
  // C's versions and payments arrive together; a late change of A1 at +5m, behind the watermark the
  // dimension already passed (rows emitted with the older version keep it; a new A1 payment at +7m
  // gets it); D's payments are behind the new watermark with no D version: missing. E gets a version,
  // and payments the dimension will not pass: joined at the bound in phase 3.
  for (const c of ["b1", "b2", "b3"]) {
    change(c, rng.int(-30, 20), 2);
    change(c, rng.int(21, 35), 2);
  }
  for (const c of ["c1", "c2"]) for (let i = 0; i < 3; i++) change(c, rng.int(45, 60), 2);
  change("a1", 5, 2, { status: "a1-late-change" });
  change("e1", 60, 2);
  advance(2, 70); // dimension watermark +69m
  for (let i = 0; i < 10; i++) fact(`c${rng.int(1, 2)}`, rng.int(50, 65), 2);
  fact("a1", 7, 2);
  for (let i = 0; i < 4; i++) fact("d1", rng.int(55, 60), 2);
  // Past the dimension's watermark: D2 (never gets a version in time), E1 (has one) and A.
  for (let i = 0; i < 4; i++) fact("d2", rng.int(72, 75), 2);
  for (let i = 0; i < 4; i++) fact("e1", rng.int(72, 75), 2);
  for (let i = 0; i < 10; i++) fact(`a${rng.int(1, 4)}`, rng.int(70, 75), 2);
  advance(2, 70, 75);

  // Phase 3 — the dimension creeps to +70m only; the payments run on to +110m, so rows at or before
  // +80m waited 30 minutes: joined at the bound (E1, A) or missing at the bound (D2).
  advance(3, 71);
  for (let i = 0; i < 20; i++) fact(`a${rng.int(1, 4)}`, rng.int(76, 110), 3);
  advance(3, 71, 110);

  // Phase 4 — D2's version arrives, after its payments were dead-lettered at the bound: they stay
  // dead letters (replay re-joins them); a duplicate of a phase-1 payment is a duplicate.
  change("d2", 50, 4);
  advance(4, 72);
  const again = facts.find((f) => f.customer_id === "a2" && f.phase === 1)!;
  facts.push({ ...again, phase: 4, partition: (again.partition + 1) % FACT_PARTITIONS });
}

async function produce(phase: number) {
  const dim = changes.filter((c) => c.phase === phase);
  // Shuffled: versions of one customer arrive out of order, on both partitions.
  const shuffled = [...dim].sort(() => rng.next() - 0.5);
  const messages = shuffled.map((c) => ({
    partition: c.partition,
    key: c.customer_id,
    value: JSON.stringify({
      ...c,
      changed_at: c.changed_at.toISOString(),
      partition: undefined,
      phase: undefined,
    }),
  }));
  if (phase === 1) {
    // An exact repeat of a version changes nothing; malformed changes are the pipeline's dead letters.
    messages.push({ ...messages[3]!, partition: (messages[3]!.partition + 1) % DIM_PARTITIONS });
    messages.push({ partition: 0, key: "a1", value: "{not json" });
    messages.push({ partition: 1, key: "a2", value: JSON.stringify({ customer_id: "a2", status: "x" }) });
  }
  await producer.send({ topic: dimTopic, messages });
  await sendPayments(
    w,
    facts.filter((f) => f.phase === phase),
    rng,
  );
}

// ── The recomputation ────────────────────────────────────────────────────────────────────────────

async function loadReference() {
  await fx.pool
    .query(`CREATE TABLE ref_changes (customer_id text, status text, risk int, op text, changed_at timestamptz,
                         version int, partition int, phase int)`);
  await fx.pool.query(
    `CREATE TABLE ref_facts (event_id text, customer_id text, event_time timestamptz, partition int, phase int)`,
  );
  for (const c of changes)
    await fx.pool.query(`INSERT INTO ref_changes VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
      c.customer_id,
      c.status,
      c.risk,
      c.op,
      c.changed_at,
      c.version,
      c.partition,
      c.phase,
    ]);
  for (const f of facts)
    await fx.pool.query(`INSERT INTO ref_facts VALUES ($1, $2, $3, $4, $5)`, [
      f.event_id,
      f.customer_id,
      f.event_time,
      f.partition,
      f.phase,
    ]);
}

type TExpected = { event_id: string; status: string | null; risk: number | null; version: number | null };

/**
 * Per payment: joined (the version valid at its event time among those produced by the phase it was
 * decided in), missing, or still waiting. `phaseOf`: how a row's phase is read — `phase`, or `1` when
 * everything was produced before the run started.
 */
async function recompute(phaseOf: "phase" | "1") {
  const res = await fx.pool.query<TExpected & { fate: "joined" | "missing" | "waiting" }>(
    `WITH ${decidedSql(phaseOf, 4)}
     SELECT d.event_id,
            CASE WHEN d.decided_in IS NULL THEN 'waiting' WHEN v.version IS NULL OR v.op = 'D' THEN 'missing' ELSE 'joined' END AS fate,
            CASE WHEN v.op = 'D' THEN NULL ELSE v.status END AS status,
            CASE WHEN v.op = 'D' THEN NULL ELSE v.risk END AS risk,
            CASE WHEN v.op = 'D' THEN NULL ELSE v.version END AS version
       FROM decided d
       LEFT JOIN LATERAL (SELECT status, risk, version, op FROM ref_changes c
                           WHERE c.customer_id = d.customer_id AND ${phaseOf.replace("phase", "c.phase")} <= d.decided_in
                             AND c.changed_at <= d.event_time
                           ORDER BY c.changed_at DESC, c.version DESC LIMIT 1) v ON d.decided_in IS NOT NULL
      ORDER BY d.event_id`,
  );
  const by = (fate: string) => res.rows.filter((r) => r.fate === fate);
  return {
    joined: by("joined").map(({ event_id, status, risk, version }) => ({ event_id, status, risk, version })),
    missing: by("missing").map((r) => r.event_id),
    waiting: by("waiting").map((r) => r.event_id),
  };
}

// ── What the pipeline stored ─────────────────────────────────────────────────────────────────────

async function stored(table: string, pipelineVersionId: string) {
  const got = await storedJoin<TExpected>(
    w,
    `SELECT event_id, customer_status AS status, customer_risk::int AS risk, customer_version::int AS version FROM ${table}`,
    pipelineVersionId,
  );
  const dimensionDeadLetters = await fx.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM dead_letters WHERE pipeline_version_id = $1 AND topic = $2`,
    [pipelineVersionId, dimTopic],
  );
  return { ...got, dimensionDeadLetters: dimensionDeadLetters.rows[0]!.n };
}

const sorted = (xs: string[]) => [...xs].sort();

beforeAll(async () => {
  w = await openJoinWorkload("temporal-join");
  ({ fx, dimTopic, producer } = w);
  plan();
  await loadReference();
});
afterAll(async () => {
  await w?.close();
});

describe("event-time temporal join with a changing dimension", () => {
  it(
    "every row carries the version valid at its event time among those that had arrived; late versions never rewrite emitted rows",
    { timeout: 240_000 },
    async () => {
      const spec = joinSpec("joined-phased", "joined_phased");
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
      const progress: BatchProgress[] = [];
      for (const phase of [1, 2, 3, 4]) {
        await produce(phase);
        const runner = await PipelineRunner.open(fx.resources, { pipelineVersionId, spec, owner: "test" });
        progress.push(...(await drainRunner(runner)));
      }
      const expected = await recompute("phase");
      const got = await stored("joined_phased", pipelineVersionId);

      // The workload reached every case it is about.
      expect(expected.joined.length).toBeGreaterThan(80);
      expect(expected.missing.length).toBeGreaterThanOrEqual(8);
      expect(expected.waiting.length).toBeGreaterThan(3);
      expect(expected.joined.find((r) => r.status === "a1-tie-winner")).toBeDefined();
      expect(expected.joined.find((r) => r.status === "a1-late-change")).toBeDefined();

      expect(got.joined).toEqual(expected.joined);
      expect(got.missing).toEqual(expected.missing);
      expect(sorted(got.waiting)).toEqual(sorted(expected.waiting));
      // Each dead letter says why, and that replay re-joins it.
      expect(
        got.reasons.every((r) => /^dimension_missing: no .* version for .* at .*replay it/.test(r)),
      ).toBe(true);
      expect(got.reasons.some((r) => /within waitFor/.test(r))).toBe(true);
      expect(got.reasons.some((r) => /deleted from the dimension/.test(r))).toBe(true);
      // The malformed change and the one that breaks the dimension's contract.
      expect(got.dimensionDeadLetters).toBe(2);

      // The progress record: waiting rows are state, the late change and the repeat are counted.
      const last = progress.at(-1)!;
      expect(last.join?.waiting).toBe(expected.waiting.length);
      expect(Number(last.join?.waitingBytes)).toBeGreaterThan(0);
      const sum = (k: string) => progress.reduce((s, p) => s + Number(p.join?.[k] ?? 0), 0);
      expect(sum("lateChanges")).toBeGreaterThanOrEqual(1);
      expect(sum("repeats")).toBeGreaterThanOrEqual(1);
      expect(sum("joined") + sum("joinedAtBound")).toBe(expected.joined.length);
      expect(sum("deadLettered")).toBe(expected.missing.length);
      expect(sum("joinedAtBound")).toBeGreaterThan(0);
    },
  );

  it(
    "over the complete topics, a run SIGKILLed at random moments ends exactly as an uninterrupted one, and both match the recomputation",
    { timeout: 300_000 },
    async () => {
      const whole = joinSpec("joined-whole", "joined_whole", 8);
      const { pipelineVersionId } = await registerPipelineVersion(fx.pool, whole);
      await drainRunner(
        await PipelineRunner.open(fx.resources, { pipelineVersionId, spec: whole, owner: "test" }),
      );
      const expected = await recompute("1");
      const uninterrupted = await stored("joined_whole", pipelineVersionId);
      expect(uninterrupted.joined).toEqual(expected.joined);
      expect(uninterrupted.missing).toEqual(expected.missing);
      expect(sorted(uninterrupted.waiting)).toEqual(sorted(expected.waiting));

      const killedSpec = joinSpec("joined-killed", "joined_killed", 8);
      const file = await w.specs.write("joined-killed", killedSpec as unknown as Record<string, unknown>);
      const { kills } = await runWithKills(file, fx.db.url, { kills: 5, seed: "temporal-join-kills" });
      expect(kills).toBeGreaterThanOrEqual(3);
      const [killedVersion] = (
        await fx.pool.query<{ id: string }>(
          `SELECT v.id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = 'joined-killed'`,
        )
      ).rows;
      const killed = await stored("joined_killed", killedVersion!.id);
      expect(killed.joined).toEqual(uninterrupted.joined);
      expect(killed.missing).toEqual(uninterrupted.missing);
      expect(sorted(killed.waiting)).toEqual(sorted(uninterrupted.waiting));
      expect(killed.dimensionDeadLetters).toBe(2);
    },
  );

  it(
    "in three partition groups, their processes SIGKILLed together, the join ends as the recomputation: group 0 reads the dimension, each group releases its own waiting rows",
    { timeout: 300_000 },
    async () => {
      const name = "joined-groups";
      const spec = joinSpec(name, "joined_groups", 8, FACT_PARTITIONS);
      const file = await w.specs.write(name, spec as unknown as Record<string, unknown>);
      const env = { databaseUrl: fx.db.url };
      const { killedWhileOthersRan } = await killGroupsRepeatedly({
        file,
        env,
        groups: FACT_PARTITIONS,
        rounds: 5,
        rng: Prng.from("temporal-join-groups"),
      });
      expect(killedWhileOthersRan).toBeGreaterThan(0);
      // A group that caught up before the others finished reading saw the source's time short of its
      // rows' bound: one more turn each, as the workers keep giving them, releases what it now passes.
      for (let g = 0; g < FACT_PARTITIONS; g++) {
        const again = await runSluice(["run", file, "--until-caught-up", "--group", String(g)], env);
        expect({ code: again.code, stderr: again.stderr.slice(-500) }).toEqual({
          code: 0,
          stderr: again.stderr.slice(-500),
        });
      }
      const [version] = (
        await fx.pool.query<{ id: string }>(
          `SELECT v.id FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE p.name = $1`,
          [name],
        )
      ).rows;
      const expected = await recompute("1");
      const got = await stored("joined_groups", version!.id);
      expect(got.joined).toEqual(expected.joined);
      expect(got.missing).toEqual(expected.missing);
      expect(sorted(got.waiting)).toEqual(sorted(expected.waiting));
      expect(got.dimensionDeadLetters).toBe(2);
      // The dimension was read by group 0 alone: its offsets moved only in group 0's batches.
      const readers = await fx.pool.query<{ group: number }>(
        `SELECT DISTINCT (progress->'group'->>'no')::int AS group FROM batch_log
          WHERE pipeline_version_id = $1 AND (progress->'join'->>'dimensionRecords')::int > 0`,
        [version!.id],
      );
      expect(readers.rows).toEqual([{ group: 0 }]);
    },
  );
});
