// The event-time temporal join (docs/engine.md, "Joins"): between dedup and the outputs, each row is
// enriched with the version of its dimension entity valid at the row's event time. In one batch the
// join reads the dimension changelog's new changes (dimension-reader.ts), slots them into the
// versions, then decides every row — this batch's and the ones waiting — with decide-join.ts: joined
// once the dimension's watermark passed the row's time, held while it has not (join_held), joined at
// the bound or missing once the source's event time is waitFor past it. All of it — versions,
// changelog offsets, held and released rows, dead letters — is written in the batch transaction.
// The dimension comes through a DimensionFeed (dimension-feed.ts): a changelog topic, whose versions
// this join keeps, or another pipeline's SCD2 history, whose versions stay in that pipeline's table.
//
// In partition groups (docs/partition-groups.md, "The join in groups") group 0 alone reads the
// changelog, writes versions, moves the dimension's offsets, clocks and watermark and evicts versions;
// every group decides its rows against the versions and watermark as committed, and holds and releases
// only the waiting rows of its own partitions. Each commit holds the version's row, so these writes
// never interleave; the outputs' watermarks are held by every group's earliest waiting row.
import type pg from "pg";
import {
  contractColumns,
  dimensionName,
  joinFields,
  type TColumn,
  type TCompiledSpec,
  type TJoin,
} from "@sluice/pipeline-spec";
import type { DeadLetterRow, SinkRow } from "../batch/process-batch";
import type { StateDelta } from "../operator/result-operator";
import { decideJoin, DIMENSION_MISSING, type JoinDecision } from "./decide-join";
import { mergeChange, type DimensionVersion } from "./dimension-versions";
import type { DimensionFeed } from "./dimension-feed";
import { entityKeyOf, jsonValue, type DimensionCheckpoint } from "./dimension-reader";
import {
  evictVersions,
  hasReleasable,
  loadReleasable,
  loadVersions,
  othersHeldMinMs,
  writeHeld,
  writeVersions,
  type HeldRow,
} from "./join-store";
import type { PartitionGroup } from "../store/partition-group";

export { DIMENSION_MISSING };

export interface JoinInput {
  batchId: number;
  /** This batch's rows after dedup. */
  rows: SinkRow[];
  /** The source's event time after this batch (the minimum over active partitions). */
  sourceTime: Date | null;
  /** A dead-letter replay batch: time does not move — the changelog is not read, no waiting row is released. */
  replay: boolean;
  now: Date;
}

export type JoinReport = { kind: "join" } & Record<string, number | string | null>;

export interface PreparedJoin {
  /** For the outputs: the rows released from waiting, then this batch's rows joined now, enriched. */
  rows: SinkRow[];
  /** This batch's rows dead-lettered `dimension_missing` (they leave the batch's `sink` outcome). */
  failed: DeadLetterRow[];
  /** Other dead letters: waiting rows dead-lettered now, and changelog records that broke the dimension's contract. */
  deadLetters: DeadLetterRow[];
  /**
   * The earliest event time among rows still waiting after this batch (a partition group's: its own
   * partitions'): no output's watermark may pass it.
   */
  heldMinMs: number | null;
  /** Partition groups, in the commit: the earliest waiting row of any group after this batch. */
  heldMinOfAll(client: pg.PoolClient): Promise<number | null>;
  /** Inside the batch transaction; versions replaced at or before `evictBefore` leave the state. */
  write(client: pg.PoolClient, evictBefore: Date | null): Promise<StateDelta>;
  /**
   * What checkpoints.dimension keeps after this batch (complete once write has run): its state sizes
   * added onto `stored` — in partition groups, what the other groups committed since.
   */
  checkpoint(stored: DimensionCheckpoint): DimensionCheckpoint;
  readonly report: JoinReport;
}

export class JoinOperator {
  private readonly join: TJoin;
  private readonly factColumns: TColumn[];
  private readonly added: Record<string, TColumn["type"]>;

  constructor(
    private readonly pool: pg.Pool,
    private readonly pipelineVersionId: string,
    private readonly compiled: TCompiledSpec,
    private readonly feed: DimensionFeed,
    /** The partition group this join runs for (the version is read in groups). */
    private readonly group?: PartitionGroup,
  ) {
    this.join = compiled.spec.join!;
    this.factColumns = contractColumns(compiled.spec);
    this.added = Object.fromEntries(Object.entries(joinFields(this.join)).map(([n, f]) => [n, f.type]));
  }

  /** One runner, or group 0 of partition groups: it reads the changelog and keeps the versions. */
  private get readsChangelog(): boolean {
    return this.group === undefined || this.group.no === 0;
  }

  /**
   * A batch should run even when the source has nothing new: the changelog has records not read yet,
   * or — a partition group — the dimension's watermark or the bound (`sourceTime` less waitFor)
   * releases some of its waiting rows (another group's commit moved them).
   */
  async hasOtherInput(cp: DimensionCheckpoint, sourceTime: () => Promise<Date | null>): Promise<boolean> {
    if (this.readsChangelog && (await this.feed.hasUnread(cp))) return true;
    if (!this.group) return false;
    const time = await sourceTime();
    return hasReleasable(
      this.pool,
      this.pipelineVersionId,
      cp.watermark ? new Date(cp.watermark) : null,
      time ? new Date(time.getTime() - this.compiled.timing.join!.waitForMs) : null,
      this.group,
    );
  }

  close(): Promise<void> {
    return this.feed.close();
  }

  async prepare(cp: DimensionCheckpoint, input: JoinInput): Promise<PreparedJoin> {
    const { pool, pipelineVersionId: pv } = this;
    const timing = this.compiled.timing.join!;
    const read =
      input.replay || !this.readsChangelog
        ? undefined
        : await this.feed.read(cp, input.sourceTime, input.now);
    const watermark = read ? read.watermark : cp.watermark ? new Date(cp.watermark) : null;
    const clocks = {
      dimensionWatermarkMs: watermark?.getTime() ?? null,
      sourceTimeMs: input.sourceTime?.getTime() ?? null,
      waitForMs: timing.waitForMs,
    };
    const releasable = input.replay
      ? { released: [], staysMinMs: null }
      : await loadReleasable(
          pool,
          pv,
          watermark,
          input.sourceTime ? new Date(input.sourceTime.getTime() - timing.waitForMs) : null,
          this.group,
        );
    const released = releasable.released.map((h) => ({ held: h, row: this.revive(h) }));
    const keyed = input.rows.map((row) => ({ row, key: this.keyOf(row) }));

    // Versions of every key this batch touches, with its changes slotted in.
    const keys = new Set<string>();
    for (const k of keyed) if (k.key) keys.add(k.key);
    for (const r of released) if (r.held.entityKey) keys.add(r.held.entityKey);
    for (const c of read?.changes ?? []) keys.add(c.entityKey);
    // (A changelog's are this join's own state; another pipeline's history stays in its table.)
    const versions = this.feed.versions
      ? await this.feed.versions([...keys])
      : await loadVersions(pool, pv, [...keys]);
    const stored = new Map([...versions].map(([k, vs]) => [k, new Map(vs.map((v) => [v.validFromMs, v]))]));
    let repeats = 0;
    let lateChanges = 0;
    const previousWatermarkMs = cp.watermark ? Date.parse(cp.watermark) : null;
    for (const change of read?.changes ?? []) {
      if (previousWatermarkMs !== null && change.version.validFromMs < previousWatermarkMs) lateChanges++;
      let list = versions.get(change.entityKey);
      if (!list) versions.set(change.entityKey, (list = []));
      if (mergeChange(list, change.version, this.feed.sequence) === "repeat") repeats++;
    }
    const added: { entityKey: string; version: DimensionVersion }[] = [];
    const replaced: { entityKey: string; before: DimensionVersion; version: DimensionVersion }[] = [];
    for (const key of new Set((read?.changes ?? []).map((c) => c.entityKey))) {
      const before = stored.get(key);
      for (const v of versions.get(key) ?? []) {
        const was = before?.get(v.validFromMs);
        if (!was) added.push({ entityKey: key, version: v });
        else if (was !== v) replaced.push({ entityKey: key, before: was, version: v });
      }
    }

    // Every row's fate.
    const counts = {
      joined: 0,
      joinedAtBound: 0,
      missing: 0,
      deadLettered: 0,
      held: 0,
      released: released.length,
    };
    const out: SinkRow[] = [];
    const failed: DeadLetterRow[] = [];
    const deadLetters: DeadLetterRow[] = [...(read?.deadLetters ?? [])];
    const held: HeldRow[] = [];
    const eventColumn = this.compiled.spec.eventTime!.column;
    const settle = (row: SinkRow, key: string | null, d: JoinDecision, fromHold: boolean) => {
      if (d.kind === "wait") return false;
      if (d.kind === "missing" && this.join.onMissing === "deadLetter") {
        counts.deadLettered++;
        (fromHold ? deadLetters : failed).push(this.missingDeadLetter(row, key, d.why));
        return true;
      }
      if (d.kind === "missing") counts.missing++;
      else if (d.kind === "joined") counts.joined++;
      else counts.joinedAtBound++;
      out.push(this.enrich(row, d.kind === "missing" ? undefined : d.version));
      return true;
    };
    for (const { held: h, row } of released) {
      const d = decideJoin(
        h.eventMs,
        h.entityKey ? versions.get(h.entityKey) : undefined,
        !h.entityKey,
        clocks,
      );
      // Released because the dimension or the bound reached it: it cannot wait again.
      settle(row, h.entityKey, d.kind === "wait" ? { kind: "missing", why: "no version arrived" } : d, true);
    }
    let heldMinMs = releasable.staysMinMs;
    for (const { row, key } of keyed) {
      const eventMs = (row.values[eventColumn] as Date).getTime();
      const d = decideJoin(eventMs, key ? versions.get(key) : undefined, key === null, clocks);
      if (settle(row, key, d, false)) continue;
      counts.held++;
      held.push(this.toHeld(row, key!, eventMs));
      if (heldMinMs === null || eventMs < heldMinMs) heldMinMs = eventMs;
    }

    let versionDelta: StateDelta = { rows: 0, bytes: 0 };
    let heldDelta: StateDelta = { rows: 0, bytes: 0 };
    let evicted = 0;
    // Group 0 (or one runner) moves the changelog's offsets, clocks and watermark; another group keeps
    // what is stored. Every commit adds its state sizes onto what is stored.
    const checkpoint = (stored: DimensionCheckpoint): DimensionCheckpoint => ({
      ...(this.readsChangelog
        ? {
            endOffsets: read?.endOffsets ?? cp.endOffsets ?? {},
            ...(read ? { clocks: read.clocks } : cp.clocks ? { clocks: cp.clocks } : {}),
            watermark: watermark?.toISOString() ?? null,
          }
        : {
            endOffsets: stored.endOffsets ?? {},
            ...(stored.clocks ? { clocks: stored.clocks } : {}),
            watermark: stored.watermark ?? null,
          }),
      versions: sumState(stored.versions, versionDelta),
      held: sumState(stored.held, heldDelta),
    });
    let settled: DimensionCheckpoint | undefined;
    const group = this.group;
    // Read once per commit: the other groups' waiting rows change only under the version's row, which
    // this commit holds from the retime (the outputs' hold) to the write (group 0's eviction).
    let allHeldMin: Promise<number | null> | undefined;
    const heldMinOfAll = (client: pg.PoolClient) =>
      (allHeldMin ??= group
        ? othersHeldMinMs(client, pv, group).then((others) => earliestOf(heldMinMs, others))
        : Promise.resolve(heldMinMs));
    return {
      rows: out,
      failed,
      deadLetters,
      heldMinMs,
      heldMinOfAll,
      write: async (client, evictBefore) => {
        versionDelta = await writeVersions(client, pv, added, replaced);
        // Versions are evicted by group 0 alone (other groups: none), behind every group's waiting rows too.
        const horizon = !group
          ? evictBefore
          : this.readsChangelog && evictBefore
            ? new Date(earliestOf(evictBefore.getTime(), await heldMinOfAll(client))!)
            : null;
        if (horizon) {
          const gone = await evictVersions(client, pv, horizon);
          evicted = gone.rows;
          versionDelta = { rows: versionDelta.rows - gone.rows, bytes: versionDelta.bytes - gone.bytes };
        }
        heldDelta = await writeHeld(
          client,
          pv,
          input.batchId,
          held,
          released.map((r) => r.held),
        );
        return { rows: versionDelta.rows + heldDelta.rows, bytes: versionDelta.bytes + heldDelta.bytes };
      },
      checkpoint: (stored) => (settled = checkpoint(stored)),
      get report(): JoinReport {
        const after = settled ?? checkpoint(cp);
        return {
          kind: "join",
          ...counts,
          waiting: after.held!.rows,
          waitingBytes: after.held!.bytes,
          versions: after.versions!.rows,
          versionsBytes: after.versions!.bytes,
          versionsEvicted: evicted,
          changes: added.length + replaced.length,
          repeats,
          lateChanges,
          rejected: read?.deadLetters.length ?? 0,
          dimensionRecords: read?.records ?? 0,
          dimensionBacklog: read?.backlog ?? 0,
          dimensionWatermark: after.watermark ?? null,
        };
      },
    };
  }

  /** The row's dimension key (JSON of its `on` values in dimension key order), or null if any is null. */
  private keyOf(row: SinkRow): string | null {
    const byDim = new Map(Object.entries(this.join.on).map(([fact, dim]) => [dim, fact]));
    const values = this.join.dimension.key.map((k) => row.values[byDim.get(k)!]);
    return values.some((v) => v === null || v === undefined) ? null : entityKeyOf(values);
  }

  private enrich(row: SinkRow, version: DimensionVersion | undefined): SinkRow {
    const values = { ...row.values };
    for (const [name, from] of Object.entries(this.join.fields)) {
      const v = version?.values[from] ?? null;
      values[name] = v !== null && this.added[name] === "timestamp" ? new Date(v as string) : v;
    }
    return { ...row, values };
  }

  private toHeld(row: SinkRow, entityKey: string, eventMs: number): HeldRow {
    return {
      partition: row.partition,
      offset: row.offset,
      entityKey,
      eventMs,
      row: {
        values: Object.fromEntries(Object.entries(row.values).map(([k, v]) => [k, jsonValue(v)])),
        rescued: row.rescued,
        ingestTimeMs: row.ingestTimeMs,
        key: row.record?.key ? row.record.key.toString("base64") : null,
      },
      raw: row.record?.value ?? Buffer.from(JSON.stringify(row.values)),
    };
  }

  /** A held row as it was before it waited: contract-typed values and its source record. */
  private revive(h: HeldRow): SinkRow {
    const values: Record<string, unknown> = {};
    for (const c of this.factColumns) {
      const v = h.row.values[c.name] ?? null;
      values[c.name] = v !== null && c.type === "timestamp" ? new Date(v as string) : v;
    }
    return {
      values,
      rescued: h.row.rescued,
      partition: h.partition,
      offset: h.offset,
      ingestTimeMs: h.row.ingestTimeMs,
      record: {
        partition: h.partition,
        offset: h.offset,
        key: h.row.key === null ? null : Buffer.from(h.row.key, "base64"),
        value: h.raw,
        timestamp: h.row.ingestTimeMs,
      },
    };
  }

  private missingDeadLetter(row: SinkRow, key: string | null, why: string): DeadLetterRow {
    const time = (row.values[this.compiled.spec.eventTime!.column] as Date).toISOString();
    const value = row.record?.value ?? Buffer.from(JSON.stringify(row.values));
    let payload: Record<string, unknown> | null = null;
    try {
      payload = JSON.parse(value.toString("utf8")) as Record<string, unknown>;
    } catch {
      payload = null;
    }
    return {
      outcome: "dead_letter",
      reason: `${DIMENSION_MISSING}: no ${dimensionName(this.join.dimension)} version for ${key ?? "a null key"} at ${time} (${why}); replay it once the dimension has it`,
      record: row.record ?? {
        partition: row.partition,
        offset: row.offset,
        key: null,
        value,
        timestamp: row.ingestTimeMs,
      },
      payload,
    };
  }
}

/** The earlier of two event times in ms; null only when both are. */
const earliestOf = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.min(a, b);

const sumState = (prev: { rows: number; bytes: number } | undefined, d: StateDelta) => ({
  rows: (prev?.rows ?? 0) + d.rows,
  bytes: (prev?.bytes ?? 0) + d.bytes,
});
