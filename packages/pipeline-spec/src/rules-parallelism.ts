// Partition groups (source.kafka.parallelism > 1) commit side by side, each group's batch in its own
// transaction. What two groups may both touch must merge correctly in either order. A ledger's rows do
// (its table's key and dedup state refuse a second insert across groups); so do windows and keyed
// aggregates in update or append mode, and CDC (each commit merges its deltas into the committed
// windows, or applies its changes to the keys' committed points: engine window-operator.ts,
// cdc-operator.ts). `complete` mode rewrites the whole result from all state each batch; a webhook, a
// join and several outputs keep state that two groups' batches would update from one snapshot each
// (docs/partition-groups.md designs how they merge; not built yet): refused, naming why.
import { issue, type TSpecIssue } from "./errors";
import { defineRule } from "./rule";

const AT = ["source", "kafka", "parallelism"];

const refuse = (n: number, what: string): TSpecIssue =>
  issue(
    AT,
    `parallelism ${n} is not supported with ${what} yet: partition groups run ledgers, cdc and aggregates in update or append mode into a postgres table (no join or outputs). Leave parallelism out to run it in one group`,
  );

export const parallelismRules = [
  defineRule(["source", "aggregate", "join", "outputs"], (spec) => {
    const n = spec.source.kafka.parallelism ?? 1;
    if (n === 1) return [];
    const found: TSpecIssue[] = [];
    if (spec.aggregate?.outputMode === "complete")
      found.push(refuse(n, "outputMode complete (every batch rewrites the whole result from all state)"));
    if (spec.join) found.push(refuse(n, "a join (one changelog reader and dimension watermark per version)"));
    if (spec.outputs) found.push(refuse(n, "several outputs (each output's windows and watermark)"));
    return found;
  }),
  defineRule(["source", "sink"], (spec) => {
    const n = spec.source.kafka.parallelism ?? 1;
    return n > 1 && spec.sink.webhook
      ? [refuse(n, "a webhook sink (its deliveries are sent before the commit, one sender per version)")]
      : [];
  }),
];
