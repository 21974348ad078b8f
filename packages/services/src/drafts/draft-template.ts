// What the editor starts from: a template (a ledger of every distinct event of a topic), and a small
// form for the two common shapes — a ledger and an event-time windowed aggregate — that writes the
// YAML. Pure (no server imports), so the browser builds the YAML as the form changes; the server
// validates the result like any other draft.
import { stringify } from "yaml";
import { z } from "zod";

const HEADER = `# A new pipeline. Change what you need: every change is checked against the same rules the engine uses.
# Full reference: docs/pipeline-spec.md.
`;

export const ZDraftForm = z.object({
  shape: z.enum(["ledger", "windowed"]),
  name: z.string(),
  owner: z.string(),
  description: z.string().default(""),
  topic: z.string(),
  /** "name: type" per line, e.g. "amount: decimal". */
  fields: z.array(z.object({ name: z.string(), type: z.string() })),
  eventTimeColumn: z.string(),
  watermarkDelay: z.string().default("10m"),
  dedupeKey: z.array(z.string()),
  table: z.string(),
  /** windowed only */
  window: z.string().default("5m"),
  groupBy: z.array(z.string()).default([]),
  measures: z.array(z.object({ name: z.string(), expr: z.string() })).default([]),
});
export type TDraftForm = z.input<typeof ZDraftForm>;

/** The YAML the form describes. */
export function draftFromForm(input: TDraftForm): string {
  const f = ZDraftForm.parse(input);
  const spec: Record<string, unknown> = {
    name: f.name,
    owner: f.owner,
    ...(f.description ? { description: f.description } : {}),
    source: { kafka: { topic: f.topic, startingOffsets: "earliest", maxOffsetsPerTrigger: 5000 } },
    format: "json",
    contract: {
      fields: Object.fromEntries(f.fields.filter((x) => x.name).map((x) => [x.name, x.type])),
      onUnknownField: "rescue",
      onTypeMismatch: "quarantine",
    },
    eventTime: { column: f.eventTimeColumn, watermarkDelay: f.watermarkDelay },
    ...(f.dedupeKey.length > 0 ? { dedupe: { key: f.dedupeKey, within: "watermark" } } : {}),
    ...(f.shape === "windowed"
      ? {
          aggregate: {
            window: { tumbling: f.window },
            groupBy: f.groupBy,
            measures: Object.fromEntries(f.measures.filter((m) => m.name).map((m) => [m.name, m.expr])),
            outputMode: "update",
          },
        }
      : {}),
    lateData: "deadLetter",
    sink: { postgres: { table: f.table } },
    trigger: { every: "2s" },
  };
  return HEADER + stringify(spec, { lineWidth: 0, flowCollectionPadding: true });
}

/** The payment events of the demo producer: the template's fields. */
const PAYMENT_FIELDS = [
  ["event_id", "string"],
  ["type", "string"],
  ["merchant_id", "string"],
  ["seq", "int"],
  ["payment_id", "string"],
  ["customer_id", "string"],
  ["amount", "decimal"],
  ["currency", "string"],
  ["card_country", "string"],
  ["event_time", "timestamp"],
] as const;

/** The form's starting values: a ledger of the demo's payment events. */
export function defaultDraftForm(opts: { owner?: string; topic?: string } = {}): TDraftForm {
  return {
    shape: "ledger",
    name: "my-pipeline",
    owner: opts.owner ?? "payments-data",
    description: "",
    topic: opts.topic ?? "payments",
    fields: PAYMENT_FIELDS.map(([name, type]) => ({ name, type })),
    eventTimeColumn: "event_time",
    watermarkDelay: "6h",
    dedupeKey: ["event_id"],
    table: "my_pipeline",
    window: "5m",
    groupBy: ["merchant_id"],
    measures: [
      { name: "events", expr: "count()" },
      { name: "amount", expr: "sum(amount)" },
    ],
  };
}

/** The template the editor opens with: a ledger with one expectation per action, to edit. */
export function draftTemplate(opts: { owner?: string; topic?: string } = {}): string {
  const yaml = draftFromForm(defaultDraftForm(opts));
  return yaml.replace(
    /^lateData:/m,
    `expectations:
  - name: known_type
    expr: "type in ['authorization', 'settlement', 'refund', 'dispute']"
    action: drop
  - name: positive_amount
    expr: "amount > 0"
    action: warn
lateData:`,
  );
}
