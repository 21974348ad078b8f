import { describe, expect, it } from "vitest";
import { changesInOrder, customerChangeFeed, DEMO_CHANGE_FEED } from "./customer-changes";
import { PaymentStream, type EventMessage } from "./payment-stream";

describe("customer change feed", () => {
  it("is deterministic for a seed", () => {
    expect(customerChangeFeed({ seed: 3, changes: 200, shuffleShare: 0.3 })).toEqual(
      customerChangeFeed({ seed: 3, changes: 200, shuffleShare: 0.3 }),
    );
  });

  it("names customers as the payment stream does, so the demo's join finds them (--customers 500 on both)", () => {
    const customers = DEMO_CHANGE_FEED.customers;
    const changed = new Set(
      customerChangeFeed({ seed: 3, changes: 5000, customers }).map((c) => c.customer_id),
    );
    const paid = new Set(
      new PaymentStream({ seed: 3, customers })
        .take(5000)
        .filter((m): m is EventMessage => m.kind === "event")
        .map((m) => String(m.payload.customer_id)),
    );
    for (const id of [...changed, ...paid]) expect(id).toMatch(/^cus_\d{6}$/);
    // 5000 draws over 500 customers reach every one of them on both sides.
    expect(changed.size).toBe(customers);
    expect([...paid].filter((id) => !changed.has(id))).toEqual([]);
  });

  it("versions are 1, 2, 3, ... per customer in change order, inserts after deletes", () => {
    const inOrder = changesInOrder(
      customerChangeFeed({ seed: 5, changes: 500, customers: 20, deleteShare: 0.2 }),
    );
    const last = new Map<string, { version: number; op: string }>();
    for (const c of inOrder) {
      const prev = last.get(c.customer_id);
      expect(c.version).toBe((prev?.version ?? 0) + 1);
      if (!prev || prev.op === "D") expect(c.op).toBe("I");
      else expect(c.op).not.toBe("I");
      last.set(c.customer_id, c);
    }
  });

  it("shuffling makes older versions of a customer arrive after newer ones, and repeats repeat", () => {
    const feed = customerChangeFeed({
      seed: 9,
      changes: 1000,
      customers: 30,
      shuffleShare: 0.3,
      duplicateShare: 0.05,
    });
    const newest = new Map<string, number>();
    let older = 0;
    for (const c of feed) {
      if (c.version < (newest.get(c.customer_id) ?? 0)) older++;
      newest.set(c.customer_id, Math.max(c.version, newest.get(c.customer_id) ?? 0));
    }
    expect(older).toBeGreaterThan(100);
    expect(feed.length - new Set(feed.map((c) => c.change_id)).size).toBeGreaterThan(20);
    expect(changesInOrder(feed)).toHaveLength(1000);
  });
});
