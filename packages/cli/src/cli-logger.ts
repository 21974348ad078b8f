// Logs for a person at a terminal: one readable line each on stderr (stdout stays one progress line
// per batch), filtered by LOG_LEVEL (default info). The engine's and the libraries' own logs come
// through here too; what only helps debugging is logged at debug.
import type { EngineLogger } from "@sluice/engine";

const LEVELS = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
} as const;
export type TLogLevel = keyof typeof LEVELS;

export interface CliLogger extends Required<EngineLogger> {
  enabled(level: Exclude<TLogLevel, "silent">): boolean;
}

export function createCliLogger(level: TLogLevel): CliLogger {
  const threshold = LEVELS[level];
  const write = (at: Exclude<TLogLevel, "silent">) => (obj: object, msg?: string) => {
    if (LEVELS[at] < threshold) return;
    const fields = Object.keys(obj).length > 0 ? ` ${JSON.stringify(obj)}` : "";
    console.error(`${at}: ${msg ?? ""}${fields}`);
  };
  return {
    enabled: (at) => LEVELS[at] >= threshold,
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
  };
}
