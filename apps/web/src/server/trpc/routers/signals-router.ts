// The on-call dashboards: the fleet, and per pipeline its time series, signals, graph, checkpoint
// offsets, versions and one batch. All reads (viewer); every series is bucketed in Postgres.
import {
  findFleet,
  findPartitionOffsets,
  findPipelineSeries,
  findPipelineVersions,
  getBatchDetail,
  getPipelineSignals,
  presetRange,
  type TTimeRange,
} from "@sluice/services";
import { TRPCError, type TRPCRouterRecord } from "@trpc/server";
import { roleProcedure } from "../init";
import {
  ZBatchInputSchema,
  ZPipelineRangeInputSchema,
  ZPipelineVersionInputSchema,
  type TRangeInput,
} from "./signals-router.types";

function found<T>(value: T | null, what: string): T {
  if (value === null) throw new TRPCError({ code: "NOT_FOUND", message: `No ${what}.` });
  return value;
}

const rangeOf = (r: TRangeInput): TTimeRange => ("preset" in r ? presetRange(r.preset) : r);

export const fleetRouter = {
  list: roleProcedure("viewer").query(({ ctx }) => findFleet(ctx.db)),
} satisfies TRPCRouterRecord;

export const signalsRouter = {
  series: roleProcedure("viewer")
    .input(ZPipelineRangeInputSchema)
    .query(async ({ ctx, input }) =>
      found(
        await findPipelineSeries(ctx.db, { ...input, range: rangeOf(input.range) }),
        `pipeline named "${input.pipeline}"`,
      ),
    ),

  signals: roleProcedure("viewer")
    .input(ZPipelineRangeInputSchema)
    .query(async ({ ctx, input }) =>
      found(
        await getPipelineSignals(ctx.db, { ...input, range: rangeOf(input.range) }),
        `pipeline named "${input.pipeline}"`,
      ),
    ),

  offsets: roleProcedure("viewer")
    .input(ZPipelineVersionInputSchema)
    .query(async ({ ctx, input }) =>
      found(await findPartitionOffsets(ctx.db, input), `pipeline named "${input.pipeline}"`),
    ),

  versions: roleProcedure("viewer")
    .input(ZPipelineVersionInputSchema.pick({ pipeline: true }))
    .query(async ({ ctx, input }) =>
      found(await findPipelineVersions(ctx.db, input.pipeline), `pipeline named "${input.pipeline}"`),
    ),

  batch: roleProcedure("viewer")
    .input(ZBatchInputSchema)
    .query(async ({ ctx, input }) =>
      found(
        await getBatchDetail(ctx.db, input),
        `batch ${input.batchId} of pipeline "${input.pipeline}"${input.version ? ` version ${input.version}` : ""}`,
      ),
    ),
} satisfies TRPCRouterRecord;
