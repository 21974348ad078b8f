// A partition group of a version (source.kafka.parallelism N > 1) and the lease its runner holds:
// the types every store module that fences on a group shares (group-checkpoint-store.ts takes the
// lease; offset-log-store.ts and commit-batch.ts check it).

/** Partition p belongs to group p mod `of`. */
export interface PartitionGroup {
  no: number;
  of: number;
}

/** What fences a group's plans and commits: its own epoch, and the version's when the lease was taken. */
export interface GroupLease {
  group: PartitionGroup;
  epoch: number;
  versionEpoch: number;
}

export const inGroup = (partition: number, group: PartitionGroup): boolean =>
  partition % group.of === group.no;

/** Batch ids step by 1 for one runner, by N for a partition group (striped: group g commits g, g+N, …). */
export const batchStride = (lease: number | GroupLease): number =>
  typeof lease === "number" ? 1 : lease.group.of;
