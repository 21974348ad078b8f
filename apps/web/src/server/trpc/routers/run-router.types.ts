import { RUN_COMMANDS, type TRunCommand } from "@sluice/services";
import { z } from "zod";

export const ZRunCommandSchema = z.object({
  pipeline: z.string().min(1, "Name the pipeline").max(200),
  command: z.enum(RUN_COMMANDS as [TRunCommand, ...TRunCommand[]], { error: `Choose a command: ${RUN_COMMANDS.join(", ")}` }),
  reason: z.string().max(2000).default(""),
});
