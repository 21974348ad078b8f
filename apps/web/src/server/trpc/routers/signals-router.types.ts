import { RANGE_PRESETS, ZTimeRange } from "@sluice/services";
import { z } from "zod";

const ZPipelineName = z.string().min(1, "Name the pipeline").max(200);
const ZVersion = z.number().int().positive("a version number is 1 or more").optional();

/** A chart range: a preset ending now ("1h"), or explicit instants (a custom range, a zoom). */
export const ZRangeInputSchema = z.union([
  z.object({
    preset: z.enum(
      Object.keys(RANGE_PRESETS) as [keyof typeof RANGE_PRESETS, ...(keyof typeof RANGE_PRESETS)[]],
    ),
  }),
  ZTimeRange,
]);
export type TRangeInput = z.infer<typeof ZRangeInputSchema>;

export const ZPipelineRangeInputSchema = z.object({
  pipeline: ZPipelineName,
  version: ZVersion,
  range: ZRangeInputSchema,
});
export type TPipelineRangeInput = z.infer<typeof ZPipelineRangeInputSchema>;

export const ZPipelineVersionInputSchema = z.object({ pipeline: ZPipelineName, version: ZVersion });
export type TPipelineVersionInput = z.infer<typeof ZPipelineVersionInputSchema>;

export const ZBatchInputSchema = z.object({
  pipeline: ZPipelineName,
  version: ZVersion,
  batchId: z.number().int().nonnegative("batch ids start at 0"),
});
export type TBatchInput = z.infer<typeof ZBatchInputSchema>;
