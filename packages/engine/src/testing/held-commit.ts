// A partition group's batch held between its processing and its commit, so a test can let another
// group commit in between: once armed, the group's next read takes the group's checkpoint row (FOR
// UPDATE) before returning its records, so the batch is processed and then waits at its commit's
// first lock until the test releases it. `lateByAnotherGroup` is the scenario the window and outputs
// tests share: a row on time when processed, late by the watermark another group committed meanwhile.
import { setTimeout as sleep } from "node:timers/promises";
import type { Kafka } from "kafkajs";
import type pg from "pg";
import { expect } from "vitest";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { uniqueName, waitFor } from "@sluice/testing";
import type { EngineLogger } from "../runner/engine-logger";
import { PipelineRunner, type BatchResult } from "../runner/pipeline-runner";
import { KafkaSource } from "../source/kafka-source";
import type { OffsetRange, RecordSource } from "../source/source";
import { registerPipelineVersion } from "../store/register-version";
import type { EngineFixture } from "./engine-fixture";
import { sendLedgerEvents } from "./ledger-events";

interface HeldCommit {
  /** The group runner's source (PipelineRunner.open's `source`). */
  source: RecordSource;
  /** The next read holds its batch's commit; resolves once it is held. */
  arm(): { held: Promise<void> };
  release(): Promise<void>;
}

function heldCommit(o: {
  pool: pg.Pool;
  kafka: Kafka;
  topic: string;
  pipelineVersionId: string;
  groupNo: number;
}): HeldCommit {
  let armed = false;
  let holder: pg.PoolClient | undefined;
  const hold = async () => {
    if (!armed) return;
    armed = false;
    const client = await o.pool.connect();
    await client.query("BEGIN");
    await client.query(
      `SELECT 1 FROM group_checkpoints WHERE pipeline_version_id = $1 AND group_no = $2 FOR UPDATE`,
      [o.pipelineVersionId, o.groupNo],
    );
    holder = client;
  };
  const source = new (class extends KafkaSource {
    override async read(ranges: OffsetRange[]) {
      const records = await super.read(ranges);
      await hold();
      return records;
    }
  })({ kafka: o.kafka, topic: o.topic, groupPrefix: uniqueName("hold") });
  return {
    source,
    arm() {
      armed = true;
      return {
        held: waitFor("the group's commit to be held", () => holder !== undefined, 10_000, 50).then(
          () => undefined,
        ),
      };
    },
    async release() {
      await holder!.query("COMMIT");
      holder!.release();
      holder = undefined;
    },
  };
}

/**
 * A row another group's commit makes late between this group's processing and its commit, on a
 * two-partition topic (`topic`, created by the caller) whose events are all merchant m0's, under a
 * spec with a 0s watermark delay and `parallelism: 2`: group 0 reads 10:03 on partition 0 and group 1
 * 10:00:10 on partition 1 (the watermark is 10:00:10); group 0 then processes 10:00:30 — on time — and
 * is held at its commit while group 1 commits 10:02, which moves the watermark to 10:02. Returns group
 * 0's batch once released, and the retries the runners logged.
 */
export async function lateByAnotherGroup(
  fx: EngineFixture,
  topic: string,
  spec: TPipelineSpec,
): Promise<{ pipelineVersionId: string; result: BatchResult; retries: string[] }> {
  const at = (hhmmss: string) => new Date(`2025-03-01T${hhmmss}Z`);
  const send = (prefix: string, partition: number, time: string) =>
    sendLedgerEvents(fx.kafka, topic, { prefix, count: 1, partitions: [partition], eventTime: at(time) });
  const { pipelineVersionId } = await registerPipelineVersion(fx.pool, spec);
  const { logger, retries } = retryRecorder();
  const res = { pool: fx.pool, kafka: fx.kafka, logger };

  await send("a", 0, "10:03:00");
  await send("b", 1, "10:00:10");
  const g1 = await PipelineRunner.open(res, { pipelineVersionId, spec, owner: "g1", group: 1 });
  const held = heldCommit({ pool: fx.pool, kafka: fx.kafka, topic, pipelineVersionId, groupNo: 0 });
  const g0 = await PipelineRunner.open(res, {
    pipelineVersionId,
    spec,
    owner: "g0",
    group: 0,
    source: held.source,
  });
  try {
    expect((await g0.runBatch()).kind).toBe("committed");
    expect((await g1.runBatch()).kind).toBe("committed");
    await send("c", 0, "10:00:30");
    const { held: isHeld } = held.arm();
    const g0Batch = g0.runBatch();
    await isHeld;
    await send("d", 1, "10:02:00");
    expect((await g1.runBatch()).kind).toBe("committed");
    await sleep(200);
    await held.release();
    return { pipelineVersionId, result: await g0Batch, retries };
  } finally {
    await g0.close();
    await g1.close();
  }
}

/** A runner logger that keeps the cross-group retries it is told of (each logged with its `attempt`). */
export function retryRecorder(): { logger: EngineLogger; retries: string[] } {
  const retries: string[] = [];
  const logger: EngineLogger = {
    info: (o) => {
      if (typeof o === "object" && o && "attempt" in o) retries.push(JSON.stringify(o));
    },
    warn() {},
    error() {},
  };
  return { logger, retries };
}
