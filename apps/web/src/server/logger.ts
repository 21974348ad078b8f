// Structured JSON logs for the console's server side. Never log passwords, cookies or the session key.
import "server-only";
import pino, { type Logger } from "pino";
import { webEnv } from "./env";

const holder = globalThis as typeof globalThis & { __sluiceLogger?: Logger };

export function logger(): Logger {
  holder.__sluiceLogger ??= pino({ name: "sluice-web", level: webEnv().LOG_LEVEL });
  return holder.__sluiceLogger;
}
