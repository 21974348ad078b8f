// Can version N+1 of a pipeline continue the state version N built? Registering a changed spec carries
// the checkpoint, dedup keys, open windows and CDC change points over, which is only right when the new
// spec would have built the same state from the same input. This decides it per kind of state, from
// diffSpecs' changes, naming the changed field and why; registration refuses to continue otherwise
// (docs/engine.md, "A new version"). Changes that only decide which rows go on (expectations, filter,
// lateData, the contract's policies, trigger, batch size) are compatible: the state stays what it says.
import { diffSpecs, type TSpecChange } from "./diff";
import { checkJoin } from "./join-compatibility";
import { outputViews, type TOutputView } from "./output-views";
import type { TPipelineSpec, TSingleOutputSpec } from "./spec-schema";
import {
  checkCdc,
  checkCheckpoint,
  checkDedup,
  checkLatenessNote,
  checkSink,
  checkWebhookLedger,
  checkWindows,
  describe,
  STATE_KINDS,
  type Context,
  type TStateKind,
} from "./state-checks";

export interface TStateFinding {
  state: TStateKind;
  /** The changed field, dotted as in diffSpecs ("aggregate.window.tumbling"). */
  path: string;
  /** A sentence that starts with the path, says what changed and why it matters. */
  reason: string;
}

export interface TStateCompatibility {
  /** True when the next version can continue every kind of state. */
  compatible: boolean;
  /** Each kind of state either version keeps, and whether the next version can continue it. */
  states: { state: TStateKind; continues: boolean }[];
  /** Why a kind of state cannot be continued, one per changed field. */
  problems: TStateFinding[];
  /** Compatible changes whose guarantee holds in full only after a while: said, never hidden. */
  notes: TStateFinding[];
}

export function stateCompatibility(before: TPipelineSpec, after: TPipelineSpec): TStateCompatibility {
  const problems: TStateFinding[] = [];
  const notes: TStateFinding[] = [];
  const compare = (a: TPipelineSpec, b: TPipelineSpec, output?: string) =>
    checkContext(a as TSingleOutputSpec, b as TSingleOutputSpec, problems, notes, output);
  const top = compare(before, after);
  checkCheckpoint(top);
  checkJoin(top);
  if (!before.outputs && !after.outputs) {
    // Another kind of result or sink leaves nothing to compare the operators' state with: one reason is enough.
    if (checkSink(top)) {
      checkDedup(top);
      checkWindows(top);
      checkCdc(top);
      checkWebhookLedger(top);
    }
  } else {
    checkDedup(top);
    for (const pair of outputPairs(before, after)) {
      if (pair.from && pair.to) {
        const ctx = compare(pair.from.spec, pair.to.spec, pair.to.name || pair.from.name);
        if (checkSink(ctx)) {
          checkLatenessNote(ctx);
          checkWindows(ctx);
          checkCdc(ctx);
          checkWebhookLedger(ctx);
        }
      } else if (pair.to)
        top.note(
          "sink",
          { path: `outputs.${pair.to.name}`, kind: "added" },
          "it starts with no state, at the pipeline's offsets: it holds the rows read from this version on",
        );
      else if (pair.from?.name)
        top.note(
          "sink",
          { path: `outputs.${pair.from.name}`, kind: "removed" },
          "its state is dropped with it; its table keeps the rows it holds",
        );
    }
  }
  const kept = (s: TPipelineSpec): TStateKind[] => {
    const views = outputViews(s).map((v) => v.spec);
    return [
      "checkpoint",
      "sink",
      ...(s.dedupe ? (["dedup"] as const) : []),
      ...(views.some((v) => v.aggregate) ? (["window"] as const) : []),
      ...(views.some((v) => v.cdc) ? (["cdc"] as const) : []),
      ...(views.some((v) => v.sink.webhook) ? (["webhookLedger"] as const) : []),
      ...(s.join ? (["join"] as const) : []),
    ];
  };
  const present = new Set([...kept(before), ...kept(after)]);
  const states = STATE_KINDS.filter((k) => present.has(k)).map((state) => ({
    state,
    continues: !problems.some((p) => p.state === state),
  }));
  return { compatible: problems.length === 0, states, problems, notes };
}

/**
 * The outputs of two versions side by side: matched by name, and a spec's only output ("") by the
 * table it writes (a pipeline split into outputs keeps the state of the one writing its old table).
 */
export function outputPairs(
  before: TPipelineSpec,
  after: TPipelineSpec,
): { from?: TOutputView; to?: TOutputView }[] {
  const [was, now] = [outputViews(before), outputViews(after)];
  const table = (v: TOutputView) => v.spec.sink.postgres?.table;
  const partner = (v: TOutputView, others: TOutputView[]) =>
    others.find((o) => o.name === v.name) ??
    (v.name === "" || others.some((o) => o.name === "")
      ? others.find(
          (o) => (o.name === "" || v.name === "") && table(o) !== undefined && table(o) === table(v),
        )
      : undefined);
  const pairs: { from?: TOutputView; to?: TOutputView }[] = was.map((from) => {
    const to = partner(from, now);
    return to ? { from, to } : { from };
  });
  for (const to of now) if (!pairs.some((p) => p.to === to)) pairs.push({ to });
  return pairs;
}

/** Which output's state the next version continues from which of the previous version's (by output name). */
export function outputContinuations(
  before: TPipelineSpec,
  after: TPipelineSpec,
): { from: string; to: string }[] {
  return outputPairs(before, after).flatMap((p) =>
    p.from && p.to ? [{ from: p.from.name, to: p.to.name }] : [],
  );
}

function checkContext(
  before: TSingleOutputSpec,
  after: TSingleOutputSpec,
  problems: TStateFinding[],
  notes: TStateFinding[],
  output?: string,
): Context {
  const changes = diffSpecs(before, after);
  // An output's changes are named by their place in the spec: outputs.<name>.aggregate.window.
  const place = (path: string) =>
    output && OUTPUT_PATHS.some((p) => path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`))
      ? `outputs.${output}.${path}`
      : path;
  const finding = (state: TStateKind, change: TSpecChange, why: string) => {
    const placed = { ...change, path: place(change.path) };
    return { state, path: placed.path, reason: `${describe(placed)}: ${why}` };
  };
  return {
    before,
    after,
    at: (path) => changes.find((c) => c.path === path),
    under: (path) => changes.filter((c) => c.path === path || c.path.startsWith(`${path}.`)),
    problem: (...args) => void problems.push(finding(...args)),
    note: (...args) => void notes.push(finding(...args)),
  };
}

const OUTPUT_PATHS = ["sink", "aggregate", "cdc", "transform", "expectations", "eventTime.watermarkDelay"];
