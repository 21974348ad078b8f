// Partition groups (source.kafka.parallelism > 1) commit side by side, each group's batch in its own
// transaction. What two groups may both touch must merge correctly in either order. A ledger's rows do
// (its table's key and dedup state refuse a second insert across groups); so do windows and keyed
// aggregates in update or append mode, and CDC (each commit merges its deltas into the committed
// windows, or applies its changes to the keys' committed points: engine window-operator.ts,
// cdc-operator.ts) — as a pipeline's one result or as several outputs, each by its own watermark; and
// rows delivered to a webhook (one ledger row per key, whichever group meets it); and a join (group 0
// reads the dimension, each group releases its own partitions' waiting rows: engine join-operator.ts).
// `complete` mode rewrites the whole result from all state each batch; windows delivered to a webhook
// are sent before the commit, so two groups would each send their own value of a shared window:
// refused, naming why.
import { issue, type TSpecIssue } from "./errors";
import { defineRule } from "./rule";

const AT = ["source", "kafka", "parallelism"];

const refuse = (n: number, what: string): TSpecIssue =>
  issue(
    AT,
    `parallelism ${n} is not supported with ${what} yet: partition groups run ledgers, joins, cdc, webhook rows and aggregates in update or append mode (not complete mode, no windows delivered to a webhook). Leave parallelism out to run it in one group`,
  );

const complete = (where = "") =>
  `outputMode complete${where} (every batch rewrites the whole result from all state)`;
const windowsToWebhook = (where = "") =>
  `an aggregate delivered to a webhook${where} (each window is sent before the commit: two groups would send their own values of a shared window)`;

export const parallelismRules = [
  defineRule(["source", "aggregate", "outputs"], (spec) => {
    const n = spec.source.kafka.parallelism ?? 1;
    if (n === 1) return [];
    const found: TSpecIssue[] = [];
    if (spec.aggregate?.outputMode === "complete") found.push(refuse(n, complete()));
    for (const [name, o] of Object.entries(spec.outputs ?? {})) {
      if (o.aggregate?.outputMode === "complete") found.push(refuse(n, complete(` in output ${name}`)));
      if (o.aggregate && o.sink.webhook) found.push(refuse(n, windowsToWebhook(` in output ${name}`)));
    }
    return found;
  }),
  defineRule(["source", "aggregate", "sink"], (spec) => {
    const n = spec.source.kafka.parallelism ?? 1;
    return n > 1 && spec.aggregate && spec.sink.webhook ? [refuse(n, windowsToWebhook())] : [];
  }),
];
