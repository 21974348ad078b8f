import { CHANGE_REQUEST_STATUSES, type TChangeRequestStatus } from "@sluice/services";
import { z } from "zod";

export const ZChangeListInputSchema = z.object({
  status: z
    .enum(["open", ...(CHANGE_REQUEST_STATUSES as readonly TChangeRequestStatus[])] as [
      "open",
      ...TChangeRequestStatus[],
    ])
    .optional(),
  pipeline: z.string().min(1).max(200).optional(),
  /** A page of the queue: requests older than this id (the previous page's last), newest first. */
  before: z
    .string()
    .regex(/^\d{1,19}$/, { error: "before must be a change request number" })
    .optional(),
  limit: z.number().int().min(1).max(200).optional(),
});
export const ZChangeGetInputSchema = z.object({ id: z.coerce.bigint() });
export const ZChangeResetsInputSchema = z.object({ pipeline: z.string().min(1).max(200) });
