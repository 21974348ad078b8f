import { RUN_COMMANDS, type TRunCommand } from "@sluice/services";
import { z } from "zod";

export const ZRunCommandSchema = z.object({
  pipeline: z.string().min(1, "Name the pipeline").max(200),
  /** The version the page shows (`?v=N`); without it, the serving one. The command acts on it only. */
  version: z.number().int().positive("a version number is 1 or more").optional(),
  command: z.enum(RUN_COMMANDS as [TRunCommand, ...TRunCommand[]], {
    error: `Choose a command: ${RUN_COMMANDS.join(", ")}`,
  }),
  /** Asked for by the console: it is what a colleague reads later in the run history and the audit log. */
  reason: z
    .string()
    .trim()
    .min(1, "Give a reason: it is recorded with your name in the run history and the audit log")
    .max(2000),
});
