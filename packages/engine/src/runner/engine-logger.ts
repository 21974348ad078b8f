// The logger the engine writes to (pino's shape, or anything with these methods): its own file because
// every part of the runner logs, and none should import the runner for a type.
export interface EngineLogger {
  /** What helps debugging only (optional: a logger without it drops those lines). */
  debug?(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
