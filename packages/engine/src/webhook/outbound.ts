// The webhook sink's outbound HTTP (@sluice/outbound-http), built from the settings the process hands
// the engine through its env lookup: one client (one connection pool) per distinct setting.
import { createOutboundHttp, type TOutboundHttp } from "@sluice/outbound-http";
import { ConfigurationError } from "../errors";

const clients = new Map<string, TOutboundHttp>();

export function outboundFrom(env: ((name: string) => string | undefined) | undefined): TOutboundHttp {
  const allow = env?.("SLUICE_OUTBOUND_ALLOW") ?? "";
  const signingKey = env?.("SLUICE_SIGNING_KEY");
  const id = JSON.stringify([allow, signingKey ?? null]);
  let client = clients.get(id);
  if (!client) {
    try {
      client = createOutboundHttp({ allow, signingKey });
    } catch (err) {
      throw new ConfigurationError((err as Error).message);
    }
    clients.set(id, client);
  }
  return client;
}
