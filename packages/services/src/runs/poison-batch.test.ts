// What a failed version says about the batch that killed its workers: the offsets it read, or (a
// dead-letter replay batch, which reads no offsets) which replay it was.
import { describe, expect, it } from "vitest";
import { poisonBatchMessage } from "./poison-batch";

describe("poisonBatchMessage", () => {
  it("names the offsets of a Kafka batch", () => {
    expect(poisonBatchMessage(7, [{ partition: 0, from: 100, to: 150 }], 3, "w1")).toMatch(
      /^batch 7 \(partition 0 offsets 100–149\): the worker running it died 3 times/,
    );
  });
  it("names the replay request and its rows for a dead-letter replay batch", () => {
    expect(poisonBatchMessage(8, [], 3, null, { replayIds: [4, 5], itemIds: [1, 2, 3] })).toMatch(
      /^batch 8 \(a dead-letter replay of 3 row\(s\), request #4, #5\): the worker running it died 3 times/,
    );
  });
});
