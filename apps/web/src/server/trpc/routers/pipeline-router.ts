import { findPipelines } from "@sluice/services";
import type { TRPCRouterRecord } from "@trpc/server";
import { roleProcedure } from "../init";

export const pipelineRouter = {
  list: roleProcedure("viewer").query(({ ctx }) => findPipelines(ctx.db)),
} satisfies TRPCRouterRecord;
