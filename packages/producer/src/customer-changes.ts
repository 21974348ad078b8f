// A CDC change feed for the customer-status demo and tests: inserts, updates and deletes of customers,
// each with a per-customer `version` (the sequence) and `changed_at`. Seeded and deterministic like the
// payment stream. Knobs make it adversarial the way CDC feeds are: changes of one customer overtaken by
// newer ones (older versions arrive last), repeats of a change, and keys spread over partitions (so a
// customer's changes are not even ordered by partition).
import type { Kafka } from "kafkajs";
import { simulatedClock, type Clock } from "./clock";
import { ensureTopic } from "./kafka-output";
import { customerId } from "./payment-events";
import { Prng, type Seed } from "./prng";

export const CUSTOMER_STATUSES = ["active", "suspended", "closed"] as const;

/**
 * The live demo's feed (customer-changes-cli.ts defaults, scripts/up.sh). The demo's customer-status
 * pipeline picks its watermark delay for it: a held-back change waits for `shuffleWindow` newer changes
 * of its customer, about customers × shuffleWindow / rate seconds (5 minutes here).
 */
export const DEMO_CHANGE_FEED = {
  ratePerSecond: 5,
  customers: 500,
  shuffleShare: 0.1,
  duplicateShare: 0.02,
} as const;

export interface CustomerChange {
  change_id: string;
  customer_id: string;
  status: (typeof CUSTOMER_STATUSES)[number];
  risk_score: number | null;
  /** I (insert), U (update), D (delete). */
  op: "I" | "U" | "D";
  changed_at: string;
  /** Per customer: 1, 2, 3, ... in the order the changes happened. */
  version: number;
}

export interface CustomerChangeOptions {
  seed?: Seed;
  /** Number of changes generated (repeats come on top). */
  changes: number;
  /** Distinct customers. Default 100. */
  customers?: number;
  /** Share of updates that delete the customer (a later change re-inserts it). Default 0.08. */
  deleteShare?: number;
  /** Share of changes held back until `shuffleWindow` newer changes of the same customer were sent. Default 0. */
  shuffleShare?: number;
  /** Default 3. Held changes still pending at the end are sent last (oldest versions last). */
  shuffleWindow?: number;
  /** Share of changes sent twice (same change_id, same bytes). Default 0. */
  duplicateShare?: number;
  /** Source of changed_at. Default: simulated, 2025-01-01, +1 s per change. */
  clock?: Clock;
}

/** Every message in send order (repeats included): the feed as Kafka will hold it. */
export function customerChangeFeed(options: CustomerChangeOptions): CustomerChange[] {
  return [...customerChanges(options)];
}

/**
 * The feed as a generator; with `changes: Infinity` it never ends (the live demo), and changes held
 * back for reordering are released only by newer changes of their customer.
 */
export function* customerChanges(options: CustomerChangeOptions): Generator<CustomerChange> {
  const rng = Prng.from(options.seed ?? 7);
  const shuffle = rng.fork("shuffle");
  const dupes = rng.fork("duplicates");
  const customers = options.customers ?? 100;
  const deleteShare = options.deleteShare ?? 0.08;
  const shuffleShare = options.shuffleShare ?? 0;
  const window = options.shuffleWindow ?? 3;
  const clock = options.clock ?? simulatedClock({ stepMs: 1000 });
  const prefix = rng.hex(6);

  const state = new Map<string, { version: number; deleted: boolean; status: CustomerChange["status"] }>();
  const held = new Map<string, { change: CustomerChange; wait: number }[]>();
  const out: CustomerChange[] = [];
  const send = (c: CustomerChange) => {
    out.push(c);
    if (dupes.chance(options.duplicateShare ?? 0)) out.push({ ...c });
  };
  const flush = function* () {
    yield* out;
    out.length = 0;
  };

  for (let i = 0; i < options.changes; i++) {
    const customer = customerId(rng.int(1, customers), customers); // the payment stream's ids
    const prev = state.get(customer);
    const version = (prev?.version ?? 0) + 1;
    let op: CustomerChange["op"];
    let status: CustomerChange["status"];
    if (!prev || prev.deleted) [op, status] = ["I", "active"];
    else if (rng.chance(deleteShare)) [op, status] = ["D", "closed"];
    else [op, status] = ["U", rng.pick(CUSTOMER_STATUSES.filter((s) => s !== prev.status))];
    state.set(customer, { version, deleted: op === "D", status });
    const change: CustomerChange = {
      change_id: `chg_${prefix}_${String(i + 1).padStart(8, "0")}`,
      customer_id: customer,
      status,
      risk_score: op === "D" ? null : rng.int(0, 100),
      op,
      changed_at: new Date(clock.now()).toISOString(),
      version,
    };
    // A newer change of this customer overtakes the ones held back; release those it has passed enough.
    const waiting = held.get(customer) ?? [];
    if (shuffle.chance(shuffleShare)) waiting.push({ change, wait: window });
    else send(change);
    for (const h of waiting) if (h.change !== change) h.wait--;
    const released = waiting.filter((h) => h.wait <= 0);
    for (const h of released) send(h.change);
    held.set(
      customer,
      waiting.filter((h) => h.wait > 0),
    );
    yield* flush();
  }
  // Still held at the end: sent last, oldest version last.
  for (const waiting of held.values()) for (const h of [...waiting].reverse()) send(h.change);
  yield* flush();
}

/** The change feed in sequence order per customer: what a correct apply-changes pipeline sees, in effect. */
export function changesInOrder(feed: readonly CustomerChange[]): CustomerChange[] {
  const seen = new Set<string>();
  return feed
    .filter((c) => (seen.has(c.change_id) ? false : (seen.add(c.change_id), true)))
    .sort((a, b) =>
      a.customer_id === b.customer_id ? a.version - b.version : a.customer_id < b.customer_id ? -1 : 1,
    );
}

export interface ProduceCustomerChangesOptions extends CustomerChangeOptions {
  kafka: Kafka;
  topic: string;
  /** Topic partitions when it is created. Default 3. */
  partitions?: number;
  /** Kafka key: customer_id (a customer's changes stay in one partition) or change_id (spread over all). Default customer. */
  keyBy?: "customer" | "change";
}

export async function produceCustomerChanges(
  options: ProduceCustomerChangesOptions,
): Promise<{ feed: CustomerChange[] }> {
  const feed = customerChangeFeed(options);
  await ensureTopic(options.kafka, options.topic, { partitions: options.partitions ?? 3 });
  const producer = options.kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    for (let i = 0; i < feed.length; i += 1000) {
      const messages = feed.slice(i, i + 1000).map((c) => ({
        key: options.keyBy === "change" ? c.change_id : c.customer_id,
        value: JSON.stringify(c),
      }));
      await producer.send({ topic: options.topic, acks: -1, messages });
    }
  } finally {
    await producer.disconnect();
  }
  return { feed };
}
