// The one module in the console that reads the process environment (through @sluice/config).
import "server-only";
import { loadEnv } from "@sluice/config";
import { ZWebEnv, type TWebEnv } from "./web-env";

let cached: TWebEnv | undefined;

/** Parsed lazily so `next build` does not need a runtime environment. */
export function webEnv(): TWebEnv {
  cached ??= loadEnv(ZWebEnv);
  return cached;
}
