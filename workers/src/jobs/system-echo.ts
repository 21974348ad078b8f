import { ZSystemEchoPayload } from "@sluice/queue";

/** A no-op job that proves the queue → worker → completion path end to end. */
export async function handleSystemEcho(data: unknown): Promise<{ echoed: string; at: string }> {
  const { message } = ZSystemEchoPayload.parse(data);
  return { echoed: message, at: new Date().toISOString() };
}
