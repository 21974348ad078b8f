// What names a batch job's turn: the version's run turn, and within it a partition group's own turn
// (run-groups.ts). Shared by the claim, the hand-over, the reconciler's reads and the queue.

/** A partition group's job: its number, the version's group count, and the group's own turn. */
export interface TGroupTurnRef {
  no: number;
  of: number;
  seq: number;
}

/** A turn whose batch job should be queued. */
export interface TScheduledRun {
  pipelineVersionId: string;
  /** The version's run turn (pipeline_runs.schedule_seq). */
  seq: number;
  /** When the turn's batch is due; null while one is in flight. */
  nextBatchAt: Date | null;
  /** A partition group's turn within the run turn. */
  group?: TGroupTurnRef;
}
