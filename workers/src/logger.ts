import { pino, type Logger } from "pino";

export type { Logger };

/** Structured JSON logs on stdout; one logger per process, children per component. */
export function createLogger(level: string, base: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { service: "sluice-worker", pid: process.pid, ...base } });
}
