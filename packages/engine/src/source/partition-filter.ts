// Which of the topic's partitions a runner reads: the spec's `source.kafka.partitions` (default all),
// and with partition groups only its group's (partition p belongs to group p mod N). The filter sits
// on the source, so planning, reading ahead, backlog and idle partitions all see the same partitions.
import { inGroup, type PartitionGroup } from "../store/partition-group";
import type { RecordSource } from "./source";

export function readsPartitions(
  source: RecordSource,
  which: { only?: readonly number[]; group?: PartitionGroup },
): RecordSource {
  const { only, group } = which;
  if (!only && !group) return source;
  const reads = (p: number) => (!only || only.includes(p)) && (!group || inGroup(p, group));
  return {
    partitionOffsets: async () => (await source.partitionOffsets()).filter((p) => reads(p.partition)),
    read: (ranges) => source.read(ranges),
    close: () => source.close(),
  };
}
