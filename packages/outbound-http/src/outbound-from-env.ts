// The outbound client of a process, built from the settings its environment lookup gives
// (SLUICE_OUTBOUND_ALLOW, SLUICE_SIGNING_KEY): one client (one connection pool) per distinct setting,
// shared by the webhook sink (the engine) and alert notifications (the services). Throws when the
// allowlist cannot be parsed, naming the bad entry.
import { createOutboundHttp, type TOutboundHttp } from "./outbound-http";

const clients = new Map<string, TOutboundHttp>();

export function outboundFromEnv(env: ((name: string) => string | undefined) | undefined): TOutboundHttp {
  const allow = env?.("SLUICE_OUTBOUND_ALLOW") ?? "";
  const signingKey = env?.("SLUICE_SIGNING_KEY");
  const id = JSON.stringify([allow, signingKey ?? null]);
  let client = clients.get(id);
  if (!client) {
    client = createOutboundHttp({ allow, signingKey });
    clients.set(id, client);
  }
  return client;
}
