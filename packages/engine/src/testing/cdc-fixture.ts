// The customer-status CDC pipeline the engine's CDC tests run, and the expected tables computed
// independently from the change feed applied in sequence order (what "correct" means for CDC).
import { changesInOrder, type CustomerChange } from "@sluice/producer";
import type { TPipelineSpec } from "@sluice/pipeline-spec";
import { ledgerSpec } from "./engine-fixture";

export interface CustomerStatusOptions {
  name: string;
  table: string;
  scdType: 1 | 2;
  maxOffsetsPerTrigger?: number;
  /** Event time from changed_at (which orders each customer's changes as version does), watermark this far behind. */
  watermarkDelay?: string;
  /** cdc.stateEviction: watermark (needs watermarkDelay). */
  stateEviction?: boolean;
}

export function customerStatusSpec(topic: string, opts: CustomerStatusOptions): TPipelineSpec {
  return ledgerSpec(topic, {
    name: opts.name,
    owner: "risk",
    source: {
      kafka: { topic, startingOffsets: "earliest", maxOffsetsPerTrigger: opts.maxOffsetsPerTrigger ?? 300 },
    },
    contract: {
      fields: {
        change_id: "string",
        customer_id: "string",
        status: "string",
        risk_score: "int?",
        op: "string",
        changed_at: "timestamp",
        version: "int",
      },
      onUnknownField: "quarantine",
      onTypeMismatch: "quarantine",
    },
    // idleTimeout 1h: the runner's clock never makes a partition idle within a test.
    eventTime: opts.watermarkDelay
      ? { column: "changed_at", watermarkDelay: opts.watermarkDelay, idleTimeout: "1h" }
      : undefined,
    dedupe: { key: ["change_id"], within: "24h" },
    expectations: [{ name: "known_op", expr: "op in ['I', 'U', 'D']", action: "fail" }],
    cdc: {
      key: ["customer_id"],
      sequenceBy: "version",
      operation: { column: "op", deleteWhen: "op == 'D'" },
      scdType: opts.scdType,
      ...(opts.stateEviction ? { stateEviction: "watermark" } : {}),
    },
    sink: { postgres: { table: opts.table } },
  });
}

/** SCD1: each customer's newest change, unless it is a delete. */
export function expectedScd1(feed: readonly CustomerChange[]) {
  const last = new Map<string, CustomerChange>();
  for (const c of changesInOrder(feed)) last.set(c.customer_id, c);
  return [...last.values()]
    .filter((c) => c.op !== "D")
    .map((c) => ({
      customer_id: c.customer_id,
      status: c.status,
      risk_score: c.risk_score,
      version: c.version,
      change_id: c.change_id,
    }))
    .sort((a, b) => (a.customer_id < b.customer_id ? -1 : 1));
}

/** SCD2: every non-delete change is a version, valid until the customer's next change. */
export function expectedScd2(feed: readonly CustomerChange[]) {
  const ordered = changesInOrder(feed);
  return ordered.flatMap((c, i) => {
    if (c.op === "D") return [];
    const next = ordered[i + 1]?.customer_id === c.customer_id ? ordered[i + 1]! : undefined;
    return [
      {
        customer_id: c.customer_id,
        valid_from: c.version,
        valid_to: next?.version ?? null,
        is_current: !next,
        status: c.status,
        change_id: c.change_id,
      },
    ];
  });
}

export const SCD1_COLUMNS = `customer_id, status, risk_score::int, version::int, change_id`;
export const SCD2_COLUMNS = `customer_id, valid_from::int, valid_to::int, is_current, status, change_id`;
