// Warm runners, one per pipeline version this worker process has run recently.
//
// Joining a Kafka consumer group is the expensive part of opening a runner, so each version keeps its
// KafkaSource (a consumer in a group of its own) warm between batches. Whether this worker may commit
// is a separate, cheap question: the lease epoch in `checkpoints`. Before each batch the pool compares
// the runner's epoch with the stored one; if another worker (or a `sluice run`) ran the version since,
// it re-takes the lease by opening a new PipelineRunner on the same warm source — one UPDATE and a
// catalog check, no group join. So when BullMQ hands consecutive batches of a version to different
// workers, each hand-over costs a few milliseconds, and because batches of a version run one at a time
// (one job per scheduling turn), two workers never fight over the lease: re-taking it is sequential.
// "Latest runner wins" still fences anything that slips through (a stalled job re-run while its first
// worker is alive): the loser's plan or commit throws FencedError and nothing of it is committed.
//
// A version read in partition groups has one entry per group this process ran: each group has its own
// source, runner and lease (group_checkpoints), so two groups of one version run here at once.
import type { Kafka } from "kafkajs";
import type pg from "pg";
import {
  ConfigurationError,
  KafkaSource,
  openRequeuedDeliveries,
  PipelineRunner,
  readGroupLeaseEpoch,
  readLeaseEpoch,
  runnerGroupPrefix,
  readLeaseOwners,
  type EngineLogger,
  type RequeuedDeliveries,
  type RequeuedReport,
} from "@sluice/engine";
import { specTiming, validateSpec, type TPipelineSpec } from "@sluice/pipeline-spec";

export interface LoadedVersion {
  pipelineVersionId: string;
  pipeline: string;
  version: number;
  spec: TPipelineSpec;
  /** undefined for `trigger: availableNow`. */
  triggerEveryMs: number | undefined;
}

export type OpenReason = "cold" | "lease-moved";

interface Entry {
  version: LoadedVersion;
  /** The partition group this entry runs; undefined for a version read by one runner. */
  group: number | undefined;
  source: KafkaSource;
  runner: PipelineRunner | undefined;
  /** Sends the pipeline's re-queued webhook deliveries; null when its sink is not a webhook. */
  requeued: RequeuedDeliveries | null | undefined;
  lastUsed: number;
  busy: boolean;
}

/** The pool's key of a version, or of one of its partition groups. */
const keyOf = (pipelineVersionId: string, group: number | undefined) =>
  group === undefined ? pipelineVersionId : `${pipelineVersionId}#g${group}`;

/** Another job of the same version (or group) is running in this process (a stalled job delivered twice). */
export class VersionBusyError extends Error {}

export interface RunnerPoolOptions {
  pool: pg.Pool;
  kafka: Kafka;
  logger: EngineLogger;
  /** Lease owner written to checkpoints: the worker id. */
  owner: string;
  /** Resolves a webhook sink's `urlFromEnv` / `headersFromEnv` (read by the process entry point). */
  env?: (name: string) => string | undefined;
  onOpen?: (v: LoadedVersion, reason: OpenReason, ms: number) => void;
}

export class RunnerPool {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly opts: RunnerPoolOptions) {}

  get size(): number {
    return this.entries.size;
  }

  versions(): LoadedVersion[] {
    return [...this.entries.values()].map((e) => e.version);
  }

  /** A batch of the version (of its partition group `group`) is running in this process now (its runner is leased). */
  isBusy(pipelineVersionId: string, group?: number): boolean {
    return this.entries.get(keyOf(pipelineVersionId, group))?.busy ?? false;
  }

  /**
   * A runner holding the current lease of the version, for exactly one batch; call `release` after.
   * Throws VersionBusyError, or what opening the runner throws (SupersededError for a version a newer one replaced).
   */
  async acquire(
    pipelineVersionId: string,
    group?: number,
  ): Promise<{
    runner: PipelineRunner;
    version: LoadedVersion;
    /** The runner was opened now, taking the lease (cold, or from whoever moved it): the caller checks its turn is still its own. */
    opened: boolean;
    /** Sends re-queued webhook deliveries under this runner's lease (between batches); undefined without a webhook sink. */
    resendRequeued(): Promise<RequeuedReport | undefined>;
    release(opts?: { discard?: boolean }): Promise<void>;
  }> {
    const key = keyOf(pipelineVersionId, group);
    let entry = this.entries.get(key);
    if (entry?.busy)
      throw new VersionBusyError(
        `a batch of pipeline version ${pipelineVersionId}${group === undefined ? "" : ` (partition group ${group})`} is already running in this worker`,
      );
    if (!entry) {
      const version = await loadVersion(this.opts.pool, pipelineVersionId);
      const source = new KafkaSource({
        kafka: this.opts.kafka,
        topic: version.spec.source.kafka.topic,
        groupPrefix: runnerGroupPrefix(pipelineVersionId, group),
      });
      entry = {
        version,
        group,
        source,
        runner: undefined,
        requeued: undefined,
        lastUsed: Date.now(),
        busy: false,
      };
      this.entries.set(key, entry);
    }
    entry.busy = true;
    let opened = false;
    try {
      const leaseEpoch =
        group === undefined
          ? await readLeaseEpoch(this.opts.pool, pipelineVersionId)
          : await readGroupLeaseEpoch(this.opts.pool, pipelineVersionId, group);
      if (!entry.runner || leaseEpoch !== entry.runner.leaseEpoch) {
        const reason: OpenReason = entry.runner ? "lease-moved" : "cold";
        const started = Date.now();
        entry.runner = await PipelineRunner.open(
          { pool: this.opts.pool, kafka: this.opts.kafka, logger: this.opts.logger },
          {
            pipelineVersionId,
            spec: entry.version.spec,
            owner: this.opts.owner,
            source: entry.source,
            ...(group === undefined ? {} : { group }),
            ...(this.opts.env ? { env: this.opts.env } : {}),
          },
        );
        this.opts.onOpen?.(entry.version, reason, Date.now() - started);
        opened = true;
      }
      entry.requeued ??=
        (await openRequeuedDeliveries(
          {
            pool: this.opts.pool,
            pipelineVersionId,
            ...(this.opts.env ? { env: this.opts.env } : {}),
            ...(group === undefined
              ? {}
              : { group: { no: group, of: entry.version.spec.source.kafka.parallelism ?? 1 } }),
          },
          entry.version.spec,
        )) ?? null;
    } catch (err) {
      entry.busy = false;
      throw err;
    }
    const e = entry;
    const runner = e.runner!;
    return {
      runner,
      version: e.version,
      opened,
      resendRequeued: async () => (e.requeued ? e.requeued.send(runner.leaseEpoch) : undefined),
      release: async ({ discard } = {}) => {
        e.busy = false;
        e.lastUsed = Date.now();
        if (discard) {
          // After an error the consumer may be in a bad state: start it afresh next time.
          e.runner = undefined;
          this.entries.delete(key);
          await e.source.close().catch(() => undefined);
        }
      },
    };
  }

  /** Close the Kafka consumers of versions idle for longer than `idleMs`. */
  async evictIdle(idleMs: number): Promise<LoadedVersion[]> {
    const now = Date.now();
    const idle = [...this.entries.values()].filter((e) => !e.busy && now - e.lastUsed > idleMs);
    for (const e of idle) this.entries.delete(keyOf(e.version.pipelineVersionId, e.group));
    await Promise.all(idle.map((e) => e.source.close().catch(() => undefined)));
    return idle.map((e) => e.version);
  }

  /**
   * Versions whose warm runner lost the lease to another process (for dropping stale gauges). Versions
   * read in partition groups are left out: their groups' leases move between workers by design.
   */
  async leaseHolders(): Promise<Map<string, boolean>> {
    const ids = [...this.entries.values()]
      .filter((e) => e.group === undefined)
      .map((e) => e.version.pipelineVersionId);
    if (ids.length === 0) return new Map();
    const owners = await readLeaseOwners(this.opts.pool, ids);
    return new Map([...owners].map(([id, owner]) => [id, owner === this.opts.owner]));
  }

  async closeAll(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((e) => e.source.close().catch(() => undefined)));
  }
}

export async function loadVersion(pool: pg.Pool, pipelineVersionId: string): Promise<LoadedVersion> {
  const res = await pool.query<{ version: number; spec: unknown; name: string }>(
    `SELECT v.version, v.spec, p.name FROM pipeline_versions v JOIN pipelines p ON p.id = v.pipeline_id WHERE v.id = $1`,
    [pipelineVersionId],
  );
  const row = res.rows[0];
  if (!row) throw new Error(`no pipeline version ${pipelineVersionId}`);
  const checked = validateSpec(row.spec);
  if (!checked.ok)
    throw new ConfigurationError(
      `stored spec of ${row.name} version ${row.version} is invalid: ${checked.errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`,
    );
  return {
    pipelineVersionId,
    pipeline: row.name,
    version: row.version,
    spec: checked.spec,
    triggerEveryMs: specTiming(checked.spec).triggerEveryMs,
  };
}
