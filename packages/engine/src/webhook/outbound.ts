// The webhook sink's outbound HTTP (@sluice/outbound-http), built from the settings the process hands
// the engine through its env lookup; a bad SLUICE_OUTBOUND_ALLOW is a configuration error.
import { outboundFromEnv, type TOutboundHttp } from "@sluice/outbound-http";
import { ConfigurationError } from "../errors";

export function outboundFrom(env: ((name: string) => string | undefined) | undefined): TOutboundHttp {
  try {
    return outboundFromEnv(env);
  } catch (err) {
    throw new ConfigurationError((err as Error).message);
  }
}
