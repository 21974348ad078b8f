// The audit log, readable by every signed-in user (a viewer can see who changed what): filtered pages
// for the Audit page and a pipeline's own history, and the same selection as CSV. Nothing writes here:
// events are recorded by the changes themselves (recordAuditEvent) and the table refuses UPDATE/DELETE.
import { exportAuditEventsCsv, findAuditEvents, ZFindAuditEventsInput } from "@sluice/services";
import type { TRPCRouterRecord } from "@trpc/server";
import { roleProcedure } from "../init";

export const auditRouter = {
  list: roleProcedure("viewer")
    .input(ZFindAuditEventsInput)
    .query(({ ctx, input }) => findAuditEvents(ctx.db, input)),

  exportCsv: roleProcedure("viewer")
    .input(ZFindAuditEventsInput)
    .query(async ({ ctx, input }) => ({
      filename: `sluice-audit-${new Date().toISOString().slice(0, 19).replace(/:/g, "")}.csv`,
      csv: await exportAuditEventsCsv(ctx.db, input),
    })),
} satisfies TRPCRouterRecord;
