// A partition group's batch held between its processing and its commit, so a test can let another
// group commit in between: once armed, the group's next read takes the group's checkpoint row (FOR
// UPDATE) before returning its records, so the batch is processed and then waits at its commit's
// first lock until the test releases it.
import type { Kafka } from "kafkajs";
import type pg from "pg";
import { uniqueName, waitFor } from "@sluice/testing";
import { KafkaSource } from "../source/kafka-source";
import type { OffsetRange, RecordSource } from "../source/source";

export interface HeldCommit {
  /** The group runner's source (PipelineRunner.open's `source`). */
  source: RecordSource;
  /** The next read holds its batch's commit; resolves once it is held. */
  arm(): { held: Promise<void> };
  release(): Promise<void>;
}

export function heldCommit(o: {
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
