import { findTeams } from "@sluice/services";
import type { TRPCRouterRecord } from "@trpc/server";
import { roleProcedure } from "../init";

export const teamRouter = {
  list: roleProcedure("viewer").query(({ ctx }) => findTeams(ctx.db)),
} satisfies TRPCRouterRecord;
