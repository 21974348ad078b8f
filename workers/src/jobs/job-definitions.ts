// Job ids and their payload schemas, apart from their handlers, so producers (the console, the
// scheduler) can enqueue without importing worker code.
import { z } from "zod";

export const JOB_SYSTEM_ECHO = "system.echo";
export const ZSystemEchoPayload = z.object({ message: z.string().max(1000) });
export type TSystemEchoPayload = z.infer<typeof ZSystemEchoPayload>;
