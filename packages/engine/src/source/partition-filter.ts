// Which of the topic's partitions a runner reads: the spec's `source.kafka.partitions` (default all),
// and with partition groups only its group's (partition p belongs to group p mod N). The filter sits
// on the source, so planning, reading ahead, backlog and idle partitions all see the same partitions.
import { inGroup, type PartitionGroup } from "../store/partition-group";
import type { RecordSource } from "./source";

export interface PartitionChoice {
  /** The spec's `source.kafka.partitions`. */
  only?: readonly number[];
  group?: PartitionGroup;
}

export const readsPartition =
  ({ only, group }: PartitionChoice) =>
  (p: number): boolean =>
    (!only || only.includes(p)) && (!group || inGroup(p, group));

export function readsPartitions(source: RecordSource, which: PartitionChoice): RecordSource {
  if (!which.only && !which.group) return source;
  const reads = readsPartition(which);
  return {
    partitionOffsets: async () => (await source.partitionOffsets()).filter((p) => reads(p.partition)),
    read: (ranges) => source.read(ranges),
    close: () => source.close(),
  };
}
