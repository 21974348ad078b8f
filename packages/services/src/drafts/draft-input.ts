// What the console sends when someone writes a spec in the browser, and the limits that keep a paste
// or a sample from costing the server more than a batch would.
import { parseSpec, formatSpecErrors } from "@sluice/pipeline-spec";
import { z } from "zod";
import {
  DRY_RUN_READ_TIMEOUT_MS,
  MAX_DRAFT_CHARS,
  MAX_SAMPLE_PER_PARTITION,
  MAX_SAMPLE_RECORDS,
} from "./draft-limits";

export { DRY_RUN_READ_TIMEOUT_MS, MAX_DRAFT_CHARS, MAX_SAMPLE_PER_PARTITION, MAX_SAMPLE_RECORDS };

export const ZDraftText = z
  .string()
  .max(
    MAX_DRAFT_CHARS,
    `the draft is longer than ${MAX_DRAFT_CHARS.toLocaleString("en")} characters; a spec is a few kilobytes: paste the spec alone`,
  );

/** A draft that must be a valid spec (dry run, register): its errors answer 400 with line and column. */
export const ZValidDraftText = ZDraftText.superRefine((text, ctx) => {
  const parsed = parseSpec(text);
  if (!parsed.ok)
    ctx.addIssue({ code: "custom", message: `the spec is not valid — ${formatSpecErrors(parsed.errors)}` });
});

const perPartition = z
  .number()
  .int()
  .min(1, "ask for at least 1 record per partition")
  .max(
    MAX_SAMPLE_PER_PARTITION,
    `a sample is at most ${MAX_SAMPLE_PER_PARTITION.toLocaleString("en")} records per partition: ask for fewer`,
  );

export const ZSampleRequest = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("last"), perPartition }),
  z
    .object({ kind: z.literal("range"), from: z.date(), to: z.date(), perPartition })
    .refine((r) => r.from < r.to, {
      message: "the time range's start must be before its end",
      path: ["from"],
    }),
]);
export type TSampleRequest = z.infer<typeof ZSampleRequest>;

export const ZCheckDraftInput = z.object({ text: ZDraftText });
export const ZDryRunDraftInput = z.object({ text: ZValidDraftText, sample: ZSampleRequest });
export const ZSubmitDraftInput = z.object({
  text: ZValidDraftText,
  reason: z.string().trim().min(1, "Say why (it is kept with the version and in the audit log)").max(500),
  /** Register with fresh state instead of continuing the previous version's (an explicit choice). */
  freshState: z.boolean().default(false),
});
export type TSubmitDraftInput = z.infer<typeof ZSubmitDraftInput>;
