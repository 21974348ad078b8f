import type { TRPCRouterRecord } from "@trpc/server";
import { checkServiceHealth } from "../../health/service-health";
import { roleProcedure } from "../init";

export const healthRouter = {
  get: roleProcedure("viewer").query(() => checkServiceHealth()),
} satisfies TRPCRouterRecord;
