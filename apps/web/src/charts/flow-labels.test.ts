import { describe, expect, it } from "vitest";
import { flowEdgeLabel, flowNodeLabel } from "./flow-labels";

describe("the pipeline graph's labels", () => {
  it("the rows waiting for the dimension read as every count on the page does", () => {
    expect(
      flowNodeLabel({
        id: "join:waiting",
        kind: "state",
        label: "waiting for dimension",
        detail: null,
        holds: { rows: 12345, bytes: 3 * 1024 * 1024 },
      }),
    ).toBe("waiting for dimension · 12,345 rows now (3.0 MiB)");
    expect(flowNodeLabel({ id: "join", kind: "phase", label: "Join", detail: "customer-changes" })).toBe(
      "Join · customer-changes",
    );
  });

  it("edge counts have separators; the edge to waiting is the signed net change", () => {
    expect(flowEdgeLabel({ from: "dedup", to: "join", rows: 1234567, leaves: false })).toBe("1,234,567");
    const waiting = { from: "join", to: "join:waiting", leaves: false, state: true };
    expect(flowEdgeLabel({ ...waiting, rows: 12345 })).toBe("+12,345 net in range");
    expect(flowEdgeLabel({ ...waiting, rows: -1500 })).toBe("−1,500 net in range");
    expect(flowEdgeLabel({ ...waiting, rows: 0 })).toBe("0 net in range");
  });
});
