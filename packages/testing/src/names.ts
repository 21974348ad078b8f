import { randomBytes } from "node:crypto";

/** A name unique to one test run, safe as a Postgres database, Kafka topic or BullMQ queue name. */
export function uniqueName(prefix: string): string {
  const clean = prefix
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .slice(0, 30);
  return `${clean}_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
}
